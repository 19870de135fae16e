#!/bin/bash
# d.sh: at d64 8k the persistent 192 x 128 beat 192 x 96 by 7%, and at 16k
# 192 x 96 took the tail split (splits=0), slower than c.sh's 192 x 96
# without it.  8k and 16k: 192 x 96 with and without the tail split, 192 x
# 128 persistent, 192 x 128 on the plain grid with the tail split (the
# previous default); bf16's seed row; two rounds.
ln -sfn _dev build
export FA4_SYSTEM_DB=
cut() { sed 's/^source=heuristic /source=H /; s/^source=sm90 /source=E /; s/source=\(.\).* ms=\([0-9.]*\) .*config=\[sm90 \(bm=[0-9]* bn=[0-9]* stages=[0-9]* swizzle=[0-9]*\).*\(sched=[a-z]*\) \(splits=[0-9]\).*/  \1 \2 \3 \4 \5/'; }
S96="sm90 bm=192 bn=96 stages=4 swizzle=32 wgs=3 regs=32/160 pingpong=0"
S128="sm90 bm=192 bn=128 stages=2 swizzle=64 wgs=3 regs=32/160 pingpong=1"
for r in 1 2; do
  for b in 2 1; do s=$((16384 / b))
    echo "r$r d64 nc b$b s$s fp8:"
    _dev/bench/plan_bench --batch $b --seqlen-q $s --heads-q 32 --head-dim 64 --dtype fp8 --rounds 9 --reps 10 \
        --config "$S96 splits=0" --config "$S96 splits=1" --config "$S128 sched=persistent" \
        --config "$S128 splits=0" 2>&1 | grep '^source\|skipped' | cut
    echo "r$r d64 nc b$b s$s bf16: $(_dev/bench/plan_bench --batch $b --seqlen-q $s --heads-q 32 --head-dim 64 \
        --db _dev/rh.db --rounds 9 --reps 10 2>&1 | grep '^source' | sed 's/.* ms=\([0-9.]*\).*/\1/')"
  done
done
