#!/bin/bash
# The serving tests on this build (late_k defaults on the varlen and paged
# paths), fp8 d128 16k with and without late_k against the bf16 seed config,
# then the d256 seed rows re-tuned.  Carries: _dev (as build).
S=$(date +%s); export FA4_SYSTEM_DB=
(FA4_DB=/tmp/s.db timeout 270 build/tests/test_gpu_serving > $OUT/serving.txt 2>&1; echo "exit $?" >> $OUT/serving.txt) &
(FA4_DB=/tmp/f.db timeout 270 build/tests/test_gpu_fp8_serving > $OUT/fp8-serving.txt 2>&1; echo "exit $?" >> $OUT/fp8-serving.txt) &
wait
for f in $OUT/serving.txt $OUT/fp8-serving.txt; do echo "$f $(grep -c '^ok' $f) ok $(grep -c '^not ok' $f) notok $(tail -1 $f)"; grep '^not ok' $f | head -5; done
echo tests_s=$(( $(date +%s) - S ))
build/fa4-tune import db/seed/h100-sxm.json --db /tmp/seed.db > /dev/null 2>&1
C="sm90 bm=128 bn=192 stages=2 swizzle=64 fused_kv=0 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 pingpong=1 sched=plain"
for r in 1 2; do
  FA4_DB=/tmp/b.db build/bench/plan_bench --batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --dtype fp8 \
      --config "$C splits=0 late_k=0" --config "$C splits=0 late_k=1" 2>&1 | grep ms= | sed "s/^/r$r fp8 nc /"
  FA4_DB=/tmp/b.db build/bench/plan_bench --batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --dtype fp8 --causal \
      --config "$C splits=1 late_k=0" --config "$C splits=1 late_k=1" 2>&1 | grep ms= | sed "s/^/r$r fp8 causal /"
  FA4_DB=/tmp/b.db build/bench/plan_bench --batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --db /tmp/seed.db 2>&1 | grep ms= | sed "s/^/r$r bf16 nc /"
  FA4_DB=/tmp/b.db build/bench/plan_bench --batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --causal --db /tmp/seed.db 2>&1 | grep ms= | sed "s/^/r$r bf16 causal /"
done 2>&1 | tee $OUT/fp8.txt | cut -c1-120
echo bench_s=$(( $(date +%s) - S ))
TLIM=28 TB=16 bash bench/results/2026-11-23-s13-latek/tune.sh C
