#!/bin/bash
# Two Q slots: a focused sweep where CTAs run several tiles (32/8 heads, 129
# and 1000 tokens, bn 128, two stages), then the A/B timing (q2ab.sh).
ln -sfn _dev build
export FA4_SYSTEM_DB=
out=${OUT:-/tmp}; mkdir -p $out/q2
( for sched in persistent dynamic; do
    echo "== sweep sched=$sched bn=128 stages=2 32/8 bf16"
    SWEEP_ONLY="sched=$sched bn=128 stages=2 swizzle=128" SWEEP_DTYPE=bf16 SWEEP_HEADS=32/8 timeout 100 _dev/bench/sweep sm90 64,128 129,1000 2>&1 | tail -6
  done ) > $out/q2/sweep2.txt 2>&1
bash bench/results/2026-11-24-s26/q2ab.sh
