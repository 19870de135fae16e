#!/bin/bash
# GQA packing on the sm90 serving paths (varlen and paged): GPU correctness
# (test_gpu_serving with the packed sm90 configs, test_gpu_fp8_serving,
# test_gpu_forward's pack section), then bench/serving's chunked-prefill
# and varlen-prefill rows, each default against the same tiles packed and
# not (FA4_CONFIGS), two runs.  Carries: _dev as build.
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
run() { name=$1; shift; ( FA4_DB=/tmp/c-$name.db timeout ${LIMIT:-400} "$@" > $O/gpu-$name.log 2>&1; echo "exit $?" >> $O/gpu-$name.log ) & }
run serving build/tests/test_gpu_serving
run fp8s build/tests/test_gpu_fp8_serving
FA4_TEST_ONLY=pack run pack build/tests/test_gpu_forward
wait
for f in $O/gpu-*.log; do echo "$f: $(grep -c '^ok' $f) ok, $(grep -c '^not ok' $f) not ok, $(grep -c '# SKIP' $f) skip, $(tail -1 $f)"; grep '^not ok' $f | head -8 | cut -c1-300; done
grep -E "^(not )?ok.*pack_gqa=1" $O/gpu-serving.log $O/gpu-fp8s.log | cut -c1-260 | head -40
T="stages=2 swizzle=128 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 pingpong=1 sched=plain splits=1 late_k=1"
export FA4_CONFIGS="sm90 bm=128 bn=176 $T pack_gqa=0;sm90 bm=128 bn=176 $T pack_gqa=1;sm90 bm=128 bn=128 $T pack_gqa=0;sm90 bm=128 bn=128 $T pack_gqa=1"
for r in 1 2; do
  echo "== run $r"; FA4_BENCH_DB=/tmp/sv.db timeout 200 build/bench/serving chunk; FA4_BENCH_DB=/tmp/sv.db timeout 200 build/bench/serving prefill
done 2>&1 | tee $O/serving.txt | cut -c1-200
