#!/bin/bash
# After packserve.sh: test_gpu_forward whole (its sections refactored last
# session, not run on a GPU since), then the varlen prefill rows (bench
# fixed: Q's host buffer), bn 128 unpacked / packed alternating, two runs.
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
( FA4_DB=/tmp/f.db timeout ${LIMIT:-420} build/tests/test_gpu_forward > $O/gpu-forward.log 2>&1; echo "exit $?" >> $O/gpu-forward.log )
f=$O/gpu-forward.log; echo "$f: $(grep -c '^ok' $f) ok, $(grep -c '^not ok' $f) not ok, $(grep -c '# SKIP' $f) skip, $(tail -1 $f)"; grep '^not ok' $f | head -8 | cut -c1-300
T="stages=2 swizzle=128 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 pingpong=1 sched=plain splits=1 late_k=1"
U="sm90 bm=128 bn=128 $T pack_gqa=0"; P="sm90 bm=128 bn=128 $T pack_gqa=1"
export FA4_CONFIGS="$U;$P;$U;$P"
for r in 1 2; do echo "== run $r"; FA4_BENCH_DB=/tmp/sv.db timeout 200 build/bench/serving prefill; done 2>&1 | tee $O/serving2.txt | cut -c1-120
