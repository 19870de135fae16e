#!/bin/bash
# Softcap's polynomial tanh at d64 only (sm90_tanh_poly): (1)
# test_gpu_forward's softcap section with this build (d64 caps 20 and 8 on
# the polynomial); (2) d64 shares 0-75 (the g.sh binaries, any head dim),
# two rounds at 16k, then causal, 4 x 4k and fp8; processes alternating.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
FA4_TEST_ONLY=softcap timeout 150 _dev/tests/test_gpu_forward > $O/forward-softcap.txt 2>&1
echo "softcap rc=$? $(grep -c '^ok' $O/forward-softcap.txt) ok, $(grep -c '^not ok' $O/forward-softcap.txt) not ok"
grep -A2 '^not ok' $O/forward-softcap.txt | head
run() { b=$1; shift; _dev/bench/$b "$@" --heuristic --rounds 9 --reps 10 2>&1 \
        | grep '^source' | sed 's/.* ms=\([0-9.]*\) min=\([0-9.]*\) max=\([0-9.]*\).*/\1 [\2-\3]/'; }
S="--batch 1 --seqlen-q 16384 --heads-q 32 --head-dim 64"
for r in 1 2; do
  for t in 0 25 50 75; do echo "r$r d64 16k cap30 t$t: $(run plan_bench_t$t $S --softcap 30)"; done
done
echo "d64 16k causal plain: $(run plan_bench $S --causal)"
for t in 0 50; do echo "d64 16k causal cap30 t$t: $(run plan_bench_t$t $S --causal --softcap 30)"; done
S="--batch 4 --seqlen-q 4096 --heads-q 32 --head-dim 64"
echo "d64 4x4k plain: $(run plan_bench $S)"
for t in 0 50; do echo "d64 4x4k cap30 t$t: $(run plan_bench_t$t $S --softcap 30)"; done
S="--batch 1 --seqlen-q 16384 --heads-q 32 --head-dim 64 --dtype fp8"
echo "fp8 d64 16k plain: $(run plan_bench $S)"
for t in 0 50; do echo "fp8 d64 16k cap30 t$t: $(run plan_bench_t$t $S --softcap 30)"; done
echo "this build d64 16k cap30: $(run plan_bench --batch 1 --seqlen-q 16384 --heads-q 32 --head-dim 64 --softcap 30)"
