#!/bin/bash
# (1) Wave quantisation of the non-causal long shapes: the same per-tile work
# (seqlen_k 16384) with 1376 tiles (seqlen_q 16384: 10.42 waves of 132) and
# 1056 tiles (seqlen_q 12672: 8 waves), d64 and d128, heuristic configs.
# (2) GQA 32/8 causal 16k against MHA with 32 and 16 heads and GQA 16/4:
# compare.py rows (cuDNN, FA4-CuTe, libfa4 with the shipped seed), twice.
# Carries: _lite, _peers.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s11.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
B=_lite/bench/plan_bench
for d in 64 128; do for r in 1 2; do for sq in 16384 12672; do
  echo "d$d sq=$sq run $r: $($B --rounds 5 --batch 1 --seqlen-q $sq --seqlen-k 16384 --heads-q 16 --head-dim $d --heuristic 2>&1 | grep '^source=' | grep -o 'ms=[0-9.]* min=[0-9.]* max=[0-9.]*\|tflops=[0-9.]*' | tr '\n' ' ')"
done; done; done
_lite/fa4-tune import db/seed/h100-sxm.json --db /tmp/seed.db > /dev/null 2>&1; echo import=$?
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site${PYTHONPATH:+:$PYTHONPATH} FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot
export PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
for i in 1 2; do
  PYTHONUNBUFFERED=1 timeout 200 python3 bench/compare.py --lib _lite/.libs/libfa4.so --db /tmp/seed.db \
    --dims "" --gqa --row 1:16384:16/16:128:1 --row 1:16384:32/32:128:1 --row 1:16384:16/4:128:1 \
    --row 1:16384:32/32:128:0 --no-fa2 --no-flashinfer --gemm 0 --reps 10 --json $O/gqa$i.json > $O/gqa$i.txt 2>&1
  echo "compare $i rc=$?"; grep -E '^128 ' $O/gqa$i.txt | cut -c1-100
done
for c in "" "sm90 bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 pingpong=0 sched=dynamic fused_kv=1" \
         "sm90 bm=128 bn=176 stages=2 swizzle=128 wgs=2 regs=24/240 pingpong=1 sched=dynamic" ; do
  for h in "32 --heads-kv 8" "32" ; do
    src="--db /tmp/seed.db"; [ -n "$c" ] && src="--config"
    if [ -n "$c" ]; then r=$($B --rounds 5 --batch 1 --seqlen-q 16384 --heads-q $h --head-dim 128 --causal --config "$c" 2>&1 | grep '^source=')
    else r=$($B --rounds 5 --batch 1 --seqlen-q 16384 --heads-q $h --head-dim 128 --causal --db /tmp/seed.db 2>&1 | grep '^source='); fi
    echo "h=$h ${c:-seed}: $(echo "$r" | grep -o 'ms=[0-9.]* min=[0-9.]* max=[0-9.]*')"
  done
done
