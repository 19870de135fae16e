#!/bin/bash
# session 7 device run 1: sm80 v2 (32 rows per warp) correctness and speed
O=$OUT; cd build
export FA4_DB=/tmp/fa4-s7.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
for t in "FA4_FAMILIES=sm80 ./tests/test_gpu_forward" "./tests/test_gpu_serving" "FA4_FAMILIES=sm80 ./tests/test_gpu_serving"; do
  n=$(echo "$t" | tr ' =/.' '____'); timeout 240 env $t > "$O/$n.log" 2>&1
  echo "=== $t rc=$? ok=$(grep -c '^ok' $O/$n.log) not_ok=$(grep -c '^not ok' $O/$n.log)"; grep '^not ok' "$O/$n.log" | head -5
done
cd ..
for d in 128 64; do
  h=$((2048/d*2)); [ $d = 128 ] && h=16 || h=32
  for c in "" "--causal"; do
    echo "=== sm80 d$d $c 16k: 16 rows (old) vs 32 rows (heuristic)"
    old="sm80 bm=128 bn=64 stages=2 swizzle=128 warps=8"; [ $d = 64 ] && old="sm80 bm=128 bn=128 stages=2 swizzle=128 warps=8"
    FA4_FAMILIES=sm80 timeout 120 build/bench/plan_bench --rounds 7 --batch 1 --seqlen-q 16384 --heads-q $h --head-dim $d $c --heuristic --config "$old" 2>&1 | tail -4
  done
done
echo "=== compare80 (FA2, cuDNN)"
FA4_FAMILIES=sm80 PYTHONUNBUFFERED=1 timeout 330 python3 bench/compare.py --lib build/.libs/libfa4.so --no-fa4-cute --reps 10 --gemm 0 \
   --json "$O/compare80.json" > "$O/compare80.log" 2>&1; echo rc=$?; tail -50 "$O/compare80.log" | cut -c1-160
