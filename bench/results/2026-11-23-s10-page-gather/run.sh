#!/bin/bash
# sm90 paged producer: page numbers of 4 boxes loaded together (FA4_PAGE_GATHER)
# against one box at a time (_kpage0: the kernel tree before, same binary),
# chunked prefill b8 x 512 new over 8k keys, 32/8 heads, bf16 and fp8, two
# rounds alternating; then correctness (test_gpu_fp8_serving, test_gpu_serving).
# Carries: build, _kpage0.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s10.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
for r in 1 2; do
  for kd in new old; do
    if [ $kd = old ]; then export FA4_KERNEL_DIR=$(pwd)/_kpage0; else unset FA4_KERNEL_DIR; fi
    timeout 100 build/bench/serving --fp8 chunk > $O/chunk-$kd-$r.txt 2>&1
    echo "round $r $kd:"; cut -c1-52 $O/chunk-$kd-$r.txt | tail -6
  done
done
unset FA4_KERNEL_DIR
timeout 200 build/tests/test_gpu_fp8_serving > $O/test_gpu_fp8_serving-3.txt 2>&1
echo "test_gpu_fp8_serving rc=$?: $(grep -c '^ok' $O/test_gpu_fp8_serving-3.txt) ok, $(grep -c '^not ok' $O/test_gpu_fp8_serving-3.txt) not ok"
grep '^not ok' $O/test_gpu_fp8_serving-3.txt | cut -c1-200 | head
timeout 230 build/tests/test_gpu_serving > $O/test_gpu_serving-2.txt 2>&1
echo "test_gpu_serving rc=$?: $(grep -c '^ok' $O/test_gpu_serving-2.txt) ok, $(grep -c '^not ok' $O/test_gpu_serving-2.txt) not ok"
grep '^not ok' $O/test_gpu_serving-2.txt | cut -c1-200 | head
