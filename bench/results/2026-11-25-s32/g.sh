#!/bin/bash
# Softcap's tanh partly on the FMA pipe (FA4_TANH_POLY_PCT; a polynomial on
# [-1, 1], a vote per block falls back to MUFU). (1) test_gpu_forward's
# softcap section with the share at 100% and at the default 50%; (2) d128
# 16k cap 30 at shares 0 (HEAD's kernel) to 100, each binary built with its
# SM90_TANH_POLY_PCT, against the plain problem; processes alternating.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
for t in test_gpu_forward_t100 test_gpu_forward; do
  FA4_TEST_ONLY=softcap timeout 110 _dev/tests/$t > $O/$t-softcap.txt 2>&1
  echo "$t softcap rc=$? $(grep -c '^ok' $O/$t-softcap.txt) ok, $(grep -c '^not ok' $O/$t-softcap.txt) not ok"
  grep -A2 '^not ok' $O/$t-softcap.txt | head
done
run() { b=$1; shift; _dev/bench/$b "$@" --heuristic --rounds 9 --reps 10 2>&1 \
        | grep '^source' | sed 's/.* ms=\([0-9.]*\) min=\([0-9.]*\) max=\([0-9.]*\).*/\1 [\2-\3]/'; }
S="--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128"
echo "d128 16k plain: $(run plan_bench $S)"
for t in 0 25 50 75 100; do echo "d128 16k cap30 t$t: $(run plan_bench_t$t $S --softcap 30)"; done
echo "d128 16k plain: $(run plan_bench $S)"
echo "d128 16k causal plain: $(run plan_bench $S --causal)"
for t in 0 50 100; do echo "d128 16k causal cap30 t$t: $(run plan_bench_t$t $S --causal --softcap 30)"; done
S="--batch 1 --seqlen-q 16384 --heads-q 32 --head-dim 64"
echo "d64 16k plain: $(run plan_bench $S)"
for t in 0 50 100; do echo "d64 16k cap30 t$t: $(run plan_bench_t$t $S --softcap 30)"; done
