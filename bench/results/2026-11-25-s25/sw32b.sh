#!/bin/bash
# Three fp8 warpgroups of 192 x 96 (32 B swizzle, bench/results/2026-11-24-s24/sw32.patch
# applied to the build) against the fp8 default, on finite inputs this time:
# one process per shape, the sources alternating, 9 rounds, twice.
ln -sfn _dev build
export FA4_SYSTEM_DB= FA4_DB=/tmp/sw32.db
PB=_dev/bench/plan_bench_sw32
S="--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --dtype fp8"
T="sm90 bm=192 bn=96 swizzle=32 wgs=3 regs=32/160 rescale=8"
C=(--heuristic --config "$T stages=3 pingpong=0" --config "$T stages=3 pingpong=1"
   --config "$T stages=2 pingpong=1" --config "$T stages=4 pingpong=0" --config "$T stages=3 pingpong=0 late_k=1")
for sh in "" "--causal" "--batch 4 --seqlen-q 4096"; do
  $PB $S $sh --rounds 1 --reps 1 "${C[@]}" > /dev/null 2>&1
  for r in 1 2; do
    echo "== [$sh] run $r"
    $PB $S $sh --rounds 9 "${C[@]}" 2>&1 | grep '^source' | sed 's/ from=.*//; s/source=sm90 bm=192 bn=96 swizzle=32 wgs=3 regs=32\/160 rescale=8/192x96 sw32/'
  done
done
