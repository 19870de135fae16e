#!/bin/bash
# After lib/jit.c counts a stack frame as local memory (falls back to the
# max-first loop, as for spills): which NVRTC each process maps; the d64 512
# config that plan_bench refused ("8 bytes of local memory") now plans;
# fp8 tuned config against the default on more shapes; compare.py twice
# with the re-tuned seed.  Carries: _dev as build, _peers.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/c7.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
ldd build/bench/plan_bench | grep -i nvrtc; ls -la /usr/local/cuda/lib64/libnvrtc.so* 2>/dev/null | head -3
C="sm90 bm=192 bn=128 stages=2 swizzle=128 fused_kv=0 q_tiles=1 warps=0 wgs=3 regs=32/160 cluster=1 exp2_emu=0 rescale=8 pingpong=1 sched=persistent splits=1 pack_gqa=0 kv_split_warps=0 late_k=0"
for r in 1 2; do timeout 60 build/bench/plan_bench --batch 32 --seqlen-q 512 --heads-q 32 --head-dim 64 --config "$C" 2>&1 | grep -o "^plan_bench.*\|ms=[0-9.]*"; done
FW="sm90 bm=128 bn=192 stages=2 swizzle=64 fused_kv=1 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 pingpong=0 sched=persistent splits=1 pack_gqa=0 kv_split_warps=0 late_k=0"
for shape in "--batch 4 --seqlen-q 4096 --heads-q 16 --head-dim 128" "--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --causal" "--batch 1 --seqlen-q 16384 --heads-q 32 --heads-kv 8 --head-dim 128"; do
 for r in 1 2; do
  a=$(timeout 60 build/bench/plan_bench $shape --dtype fp8 --heuristic 2>&1 | grep '^source' | grep -o 'ms=[0-9.]*')
  b=$(timeout 60 build/bench/plan_bench $shape --dtype fp8 --config "$FW" 2>&1 | grep -o '^plan_bench.*\|ms=[0-9.]*' | head -1)
  echo "fp8 [$shape] r$r default $a  tuned-16k $b"
 done
done
build/fa4-tune import db/seed/h100-sxm.json --db /tmp/seed7.db > /dev/null 2>&1; echo import=$?
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
for r in 4 5; do
PYTHONUNBUFFERED=1 timeout 200 python3 bench/compare.py --lib build/.libs/libfa4.so --db /tmp/seed7.db \
    --dims 64,128,256 --gqa --reps 10 --json "$O/run$r.json" > "$O/run$r.txt" 2>&1
echo "run $r rc=$?"; grep -A5 "^geomean" $O/run$r.txt; grep "behind" $O/run$r.txt; grep -c "(heuristic)" $O/run$r.txt
done
