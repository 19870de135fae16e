#!/bin/bash
# sm80 loop changes (branch sm80-speed) on the H100: the A/B of the kernel trees
# (this tree's kernels vs 0ec863f's in _kold9, same binary, alternating processes)
# and the new switches, then test_api and test_gpu_fp8_serving of the merged build.
# (Correctness ran before: FA4_FAMILIES=sm80 test_gpu_forward 438/438, test_gpu_serving
# 244/244 with and without FA4_FAMILIES=sm80: …/correctness-*.txt.)  Carries: build, _kold9.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s9c.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
cd build
t() { local name=$1; shift; timeout ${T:-90} "$@" > $O/$name.txt 2>&1; echo "$name rc=$? ok=$(grep -c '^ok' $O/$name.txt) notok=$(grep -c '^not ok' $O/$name.txt)"; grep '^not ok' $O/$name.txt | head -5 | cut -c1-200; }
B="bench/plan_bench --rounds 5 --batch 1 --seqlen-q 16384"
for round in 1 2; do
  for shape in "--heads-q 32 --head-dim 64" "--heads-q 32 --head-dim 64 --causal" "--heads-q 16 --head-dim 128" \
               "--heads-q 8 --head-dim 256" "--heads-q 8 --head-dim 256 --causal"; do
    for tree in new old; do
      if [ $tree = old ]; then kd=$(pwd)/../_kold9/kernels; else kd=$(pwd)/../kernels; fi
      r=$(FA4_FAMILIES=sm80 FA4_KERNEL_DIR=$kd timeout 60 $B $shape --heuristic 2>&1 | grep "^source" | sed 's/ from=.*config=\[/ [/' | cut -c1-110)
      echo "r$round $tree $shape: $r"
    done
  done
done | tee $O/ab.txt
C="sm80 bm=128 bn=64 stages=2 swizzle=128 warps=4 splits=0"
C8="sm80 bm=128 bn=64 stages=2 swizzle=128 warps=8 splits=0"
for c in "" "--causal"; do
  FA4_FAMILIES=sm80 timeout 90 $B --heads-q 32 --head-dim 64 $c --heuristic --config "$C fused_kv=1" --config "$C rescale=8" --config "$C fused_kv=1 rescale=8" 2>&1 | grep "^source" | sed 's/ from=.*config=\[/ [/' | cut -c1-150
  FA4_FAMILIES=sm80 timeout 90 $B --heads-q 8 --head-dim 256 $c --heuristic --config "$C8 fused_kv=1" --config "$C8 rescale=8" --config "$C8 fused_kv=1 rescale=8" 2>&1 | grep "^source" | sed 's/ from=.*config=\[/ [/' | cut -c1-150
  FA4_FAMILIES=sm80 timeout 90 $B --heads-q 16 --head-dim 128 $c --heuristic --config "$C rescale=8" 2>&1 | grep "^source" | sed 's/ from=.*config=\[/ [/' | cut -c1-150
done | tee $O/switches.txt
t api tests/test_api
T=150 t fp8-serving tests/test_gpu_fp8_serving
