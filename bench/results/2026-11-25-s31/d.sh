#!/bin/bash
# fp8 d64 dense defaults after c.sh: the persistent scheduler up to 4k
# keys, 192 x 96 (32 B swizzle, 4 stages) past 4k.  (1) test_gpu_fp8's
# defaults (two new d64 dense cases: 2 x 1000 with outliers, persistent;
# 4500 keys, 192 x 96); (2) the default against the other side's tile at
# 4k and 8k (where the boundary was not measured) and against bf16's seed
# row at 2k-16k, processes alternating, two rounds.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
FA4_TEST_ONLY=defaults timeout 260 _dev/tests/test_gpu_fp8 > $O/fp8-defaults.txt 2>&1
echo "fp8 defaults rc=$? $(grep -c '^ok' $O/fp8-defaults.txt) ok, $(grep -c '^not ok' $O/fp8-defaults.txt) not ok"
grep '^not ok' $O/fp8-defaults.txt | head
grep -o 'sm90 bm=[0-9]* bn=[0-9]* stages=[0-9]* swizzle=[0-9]*\|sched=[a-z]*\|splits=[0-9]\|d64/64 causal=0' $O/fp8-defaults.txt | paste -sd' ' | grep -o 'sm90[^s]*sched=[a-z]* splits=[0-9] d64/64 causal=0'
cut() { sed 's/^source=heuristic /source=H /; s/^source=sm90 /source=E /; s/source=\(.\).* ms=\([0-9.]*\) .*config=\[sm90 \(bm=[0-9]* bn=[0-9]* stages=[0-9]* swizzle=[0-9]*\).*\(sched=[a-z]*\) \(splits=[0-9]\).*/  \1 \2 \3 \4 \5/'; }
PS="sm90 bm=192 bn=128 stages=2 swizzle=64 wgs=3 regs=32/160 pingpong=1 sched=persistent"
S96="sm90 bm=192 bn=96 stages=4 swizzle=32 wgs=3 regs=32/160 pingpong=0"
for r in 1 2; do
  for b in 8 4 2 1; do s=$((16384 / b)); alt=
    [ $s = 4096 ] && alt=$S96; [ $s = 8192 ] && alt=$PS
    echo "r$r d64 nc b$b s$s fp8:"
    _dev/bench/plan_bench --batch $b --seqlen-q $s --heads-q 32 --head-dim 64 --dtype fp8 --rounds 9 --reps 10 \
        --heuristic ${alt:+--config "$alt"} 2>&1 | grep '^source\|skipped' | cut
    echo "r$r d64 nc b$b s$s bf16: $(_dev/bench/plan_bench --batch $b --seqlen-q $s --heads-q 32 --head-dim 64 \
        --db _dev/rh.db --rounds 9 --reps 10 2>&1 | grep '^source' | sed 's/.* ms=\([0-9.]*\).*/\1/')"
  done
done
