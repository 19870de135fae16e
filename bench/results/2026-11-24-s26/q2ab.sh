#!/bin/bash
# Two Q slots, timed: HEAD's kernels (one slot) against these, the seed's
# configs of the short persistent-scheduler rows (bench/kernel_ab.sh, 3
# rounds); the 4k rows with an experiment build that takes two slots at any
# length (plan_bench_q2all).
ln -sfn _dev build
export FA4_SYSTEM_DB=
out=${OUT:-/tmp}; mkdir -p $out/q2
D=bench/results/2026-11-24-s26
PLAN_BENCH=_dev/bench/plan_bench bash bench/kernel_ab.sh $PWD/_dev/kold/kernels $D/q2rows.txt 3 > $out/q2/ab.txt 2>&1
PLAN_BENCH=_dev/bench/plan_bench_q2all AB_DB=/tmp/ab2.db bash bench/kernel_ab.sh $PWD/_dev/kold/kernels $D/q2rows_long.txt 2 > $out/q2/ab_long.txt 2>&1
