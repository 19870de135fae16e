#!/bin/bash
# (1) fa4-tune coarse on the four d64 8k/16k rows, starting from the seed (the
# tuner keeps the row in use unless a candidate wins every confirmation
# round): does it now take the persistent fused late_k tile plan_bench and
# compare.py found 1.3% faster at non-causal 8k/16k?  (2) d64 causal 8k/16k:
# the seed's ping-pong / late_k against the other three pairings.  (3) fp8
# against bf16 at d128 16k, each problem's default at the shipped seed,
# processes alternating, four rounds (issue 12's 1.5x and 1.4x).
ln -sfn _dev build
export FA4_SYSTEM_DB=
out=${OUT:-/tmp}; mkdir -p $out/t
cp _dev/rh.db /tmp/tune.db
for row in "2 8192" "1 16384"; do for c in "" "--causal"; do
  set -- $row
  timeout 120 _dev/fa4-tune tune --db /tmp/tune.db --batch $1 --seqlen-q $2 --heads-q 32 --head-dim 64 $c \
     --strategy coarse -j 16 > /tmp/tune-$2$c.txt 2>&1
  echo "== tune d64 $2 $c rc=$?"; grep -E "^ +[1-4] |default is|stored|kept|in use" /tmp/tune-$2$c.txt | cut -c1-330
done; done
base="swizzle=128 q_tiles=1 warps=0 wgs=3 regs=32/160 cluster=1 exp2_emu=0 rescale=8 pack_gqa=0 kv_split_warps=0"
b="sm90 bm=192 bn=128 stages=2"
ca=("$b fused_kv=0 pingpong=1 sched=plain splits=1 late_k=0 $base"
    "$b fused_kv=0 pingpong=0 sched=plain splits=1 late_k=1 $base"
    "$b fused_kv=0 pingpong=1 sched=plain splits=1 late_k=1 $base"
    "$b fused_kv=0 pingpong=0 sched=plain splits=1 late_k=0 $base"
    "$b fused_kv=1 pingpong=1 sched=plain splits=1 late_k=0 $base")
args=(); for c in "${ca[@]}"; do args+=(--config "$c"); done
for shape in "1 16384" "2 8192"; do set -- $shape
  for run in 1 2; do
    _dev/bench/plan_bench --batch $1 --seqlen-q $2 --heads-q 32 --head-dim 64 --causal --rounds 9 --reps 10 "${args[@]}" > /tmp/c.txt 2>&1
    echo "== d64 causal $2 run $run: $(grep '^source' /tmp/c.txt | sed 's/.*ms=\([0-9.]*\).*/\1/' | tr '\n' ' ') $(grep -v '^source\|^#' /tmp/c.txt | head -1)"
  done
done
for r in 1 2 3 4; do for c in "" "--causal"; do
  l="fp8/bf16 d128 16k ${c:-nc} r$r:"
  for dt in fp8 bf16; do
    dta=(); [ $dt = fp8 ] && dta=(--dtype fp8)
    _dev/bench/plan_bench --batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 $c "${dta[@]}" --rounds 9 --reps 10 --db _dev/rh.db > /tmp/f.txt 2>&1
    l="$l $dt $(grep '^source' /tmp/f.txt | sed 's/.*ms=\([0-9.]*\).*/\1/') $(grep -v '^source\|^#' /tmp/f.txt | head -1)"
  done; echo "$l"
done; done
