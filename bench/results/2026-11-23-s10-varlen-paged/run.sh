#!/bin/bash
# Varlen queries over a paged cache on the sm90 family (plain grid): timings
# against the sm80 default the same problems had before (FA4_CONFIGS), bf16
# and fp8, two runs; correctness: test_gpu_serving (sm90 plain configs on the
# varlen-over-pages shapes, a new ragged one) and test_gpu_fp8_serving.
# Carries: build.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s10.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
export FA4_CONFIGS="sm80 bm=128 bn=32 stages=2 swizzle=128 warps=4"
for r in 1 2; do
    timeout 100 build/bench/serving --fp8 "chunk varlen" > $O/chunk-varlen-$r.txt 2>&1; echo "run $r rc=$?"
    cut -c1-120 $O/chunk-varlen-$r.txt
done
unset FA4_CONFIGS
timeout 280 build/tests/test_gpu_serving > $O/test_gpu_serving.txt 2>&1
echo "test_gpu_serving rc=$?: $(grep -c '^ok' $O/test_gpu_serving.txt) ok, $(grep -c '^not ok' $O/test_gpu_serving.txt) not ok"
grep '^not ok' $O/test_gpu_serving.txt | cut -c1-250 | head
grep 'varlen chunked prefill d128 ragged\|paged 64 varlen causal\|paged 32 d64 chunked' $O/test_gpu_serving.txt | grep sm90 | cut -c1-200 | head -12
timeout 180 build/tests/test_gpu_fp8_serving > $O/test_gpu_fp8_serving.txt 2>&1
echo "test_gpu_fp8_serving rc=$?: $(grep -c '^ok' $O/test_gpu_fp8_serving.txt) ok, $(grep -c '^not ok' $O/test_gpu_fp8_serving.txt) not ok"
grep '^not ok' $O/test_gpu_fp8_serving.txt | cut -c1-250 | head
grep 'varlen queries over 16-row pages' $O/test_gpu_fp8_serving.txt | grep -v SKIP | cut -c1-200
