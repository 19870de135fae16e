#!/bin/bash
# fp8 e4m3 in the sm80 family (decode tiles, split-KV, GQA packing, any page
# size): correctness (test_gpu_fp8_serving) and bf16-vs-fp8 decode timings
# (bench/serving --fp8, two runs).  Carries: build.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s10.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
timeout ${TEST_LIMIT:-330} build/tests/test_gpu_fp8_serving > $O/test_gpu_fp8_serving.txt 2>&1
echo "test_gpu_fp8_serving rc=$?: $(grep -c '^ok' $O/test_gpu_fp8_serving.txt) ok, $(grep -c '^not ok' $O/test_gpu_fp8_serving.txt) not ok"
grep -E '^not ok|^#' $O/test_gpu_fp8_serving.txt | head -30
for i in 1 2; do
    timeout 120 build/bench/serving --fp8 > $O/serving-fp8-$i.txt 2>&1; echo "serving run $i rc=$?"
done
paste -d'\n' $O/serving-fp8-1.txt | cut -c1-120
grep -h "decode\|spec" $O/serving-fp8-2.txt | awk '{print $NF}' >/dev/null
cut -c1-60 $O/serving-fp8-2.txt
