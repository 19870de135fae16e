#!/bin/bash
# Decode steps: the default (bm16 bn64, 3 stages, two CTAs per SM) against 2
# and 4 stages and bn128 (one CTA per SM), per shape through the public API
# (bench/serving, two rounds), and the defaults against cuDNN, FA4-CuTe and
# FlashInfer (bench/serving_compare.py --only decode).
# Carries: _dev as build, _peers.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB= FA4_DB=/tmp/d.db
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
T0=$(date +%s)
C="swizzle=128 warps=4 splits=0 pack_gqa=1 kv_split_warps=1"
export FA4_CONFIGS="sm80 bm=16 bn=64 stages=2 $C;sm80 bm=16 bn=64 stages=4 $C;sm80 bm=16 bn=128 stages=2 $C;sm80 bm=16 bn=128 stages=3 $C"
for r in 1 2; do timeout 150 build/bench/serving decode > $O/serving-r$r.txt 2>&1; echo "serving r$r rc=$? $(( $(date +%s) - T0 )) s"; done
unset FA4_CONFIGS
for r in 1 2; do sed 's/ q_tiles=1 warps=4 wgs=0 regs=0\/0 cluster=1 exp2_emu=0 rescale=0 pingpong=0 sched=plain//' $O/serving-r$r.txt | cut -c1-150; done
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
PYTHONUNBUFFERED=1 timeout 200 python3 bench/serving_compare.py --lib build/.libs/libfa4.so --only decode > $O/compare.txt 2>&1; echo "compare rc=$?"
tail -25 $O/compare.txt
echo "total $(( $(date +%s) - T0 )) s"
