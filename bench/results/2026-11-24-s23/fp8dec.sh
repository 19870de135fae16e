#!/bin/bash
# fp8 decode: the default (bm16 bn64, 3 stages) against the wider rings
# (bench/serving --fp8 decode, two rounds).  Carries: _dev as build.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB= FA4_DB=/tmp/d.db
C="swizzle=128 warps=4 splits=0 pack_gqa=1 kv_split_warps=1"
export FA4_CONFIGS="sm80 bm=16 bn=128 stages=2 $C;sm80 bm=16 bn=128 stages=3 $C;sm80 bm=16 bn=64 stages=4 $C"
for r in 1 2; do timeout 200 build/bench/serving --fp8 decode > $O/fp8dec-r$r.txt 2>&1; echo "r$r rc=$?"; grep -v "page16" $O/fp8dec-r$r.txt | grep "fp8\|e4m3" | sed 's/ q_tiles=1 warps=4 wgs=0 regs=0\/0 cluster=1 exp2_emu=0 rescale=0 pingpong=0 sched=plain//' | cut -c1-140; done
