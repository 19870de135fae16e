#!/bin/bash
# fp8 decode tiles: the default (bn 64, 3 stages) against more keys in flight
# (bn 128, 3-4 stages; bn 64, 4 stages), bf16 beside it, two runs
# (bench/serving --fp8, decode shapes); then test_gpu_serving (16-bit inputs,
# both families) after the sm80 kernel's changes.  Carries: build.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s10.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
export FA4_CONFIGS="sm80 bm=16 bn=128 stages=3 swizzle=128 warps=4 kv_split_warps=1 pack_gqa=1;sm80 bm=16 bn=128 stages=4 swizzle=128 warps=4 kv_split_warps=1 pack_gqa=1;sm80 bm=16 bn=64 stages=4 swizzle=128 warps=4 kv_split_warps=1 pack_gqa=1"
for i in 1 2; do
    timeout 150 build/bench/serving --fp8 decode > $O/serving-decode-configs-$i.txt 2>&1; echo "serving run $i rc=$?"
done
cut -c1-110 $O/serving-decode-configs-1.txt | grep -v "plan failed"
cut -c1-60 $O/serving-decode-configs-2.txt | grep -v "plan failed"
unset FA4_CONFIGS
timeout 200 build/tests/test_gpu_serving > $O/test_gpu_serving.txt 2>&1
echo "test_gpu_serving rc=$?: $(grep -c '^ok' $O/test_gpu_serving.txt) ok, $(grep -c '^not ok' $O/test_gpu_serving.txt) not ok"
grep '^not ok' $O/test_gpu_serving.txt | head
