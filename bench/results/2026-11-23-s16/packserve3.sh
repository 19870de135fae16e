#!/bin/bash
# GQA packing on the serving paths again, with bench/serving interleaving a
# shape's plans (default, bn 128 and 176 unpacked / packed) round by round:
# chunked and varlen prefill rows, two runs.  Carries: _dev as build.
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
T="stages=2 swizzle=128 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 pingpong=1 sched=plain splits=1 late_k=1"
export FA4_CONFIGS="sm90 bm=128 bn=128 $T pack_gqa=0;sm90 bm=128 bn=128 $T pack_gqa=1;sm90 bm=128 bn=176 $T pack_gqa=0;sm90 bm=128 bn=176 $T pack_gqa=1"
for r in 1 2; do echo "== run $r"; FA4_BENCH_DB=/tmp/sv.db timeout 200 build/bench/serving chunk; FA4_BENCH_DB=/tmp/sv.db timeout 200 build/bench/serving prefill; done 2>&1 | tee $O/serving3.txt | cut -c1-112
