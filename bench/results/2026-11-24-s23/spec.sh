#!/bin/bash
# Speculative decode (4 and 8 query tokens, heads packed: the bm64 tile) and
# the decode rows: other rings and row splits through the public API
# (bench/serving "spec", two rounds).  Carries: _dev as build.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB= FA4_DB=/tmp/d.db
C="swizzle=128 splits=0 pack_gqa=1"
export FA4_CONFIGS="sm80 bm=64 bn=128 stages=2 $C;sm80 bm=64 bn=64 stages=3 $C;sm80 bm=64 bn=64 stages=2 rescale=8 $C;sm80 bm=64 bn=64 stages=2 warps=2 $C;sm80 bm=64 bn=32 stages=3 $C;sm80 bm=128 bn=64 stages=2 warps=4 $C"
for r in 1 2; do timeout 150 build/bench/serving spec > $O/spec-r$r.txt 2>&1; echo "r$r rc=$?"; sed 's/ q_tiles=1//; s/ wgs=0 regs=0\/0 cluster=1 exp2_emu=0//; s/ pingpong=0 sched=plain//' $O/spec-r$r.txt | cut -c1-160; done
