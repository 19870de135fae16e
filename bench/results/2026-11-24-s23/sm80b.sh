#!/bin/bash
# sm80 v5 (the lean loop on 32-row tiles before Blackwell, lib/budget_sm80.c):
# correctness of the committed form -- the 32-row variants of d96, d128 and
# d192/128 over ragged lengths, the forward test's grid/window/softcap
# sections, the serving test -- then d256's tiles against FlashAttention-2's
# H100 choice (bm 64, 4 warps, 1 stage: 96 KB, two CTAs per SM), plan_bench
# in one process per shape.  Carries: _dev as build.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
T0=$(date +%s)
( FA4_DB=/tmp/sw.db SWEEP_ONLY="bm=128 warps=4" timeout 230 build/bench/sweep sm80 96,128,192/128 1,17,129,1000 > $O/sweep.txt 2>&1; echo "exit $?" >> $O/sweep.txt ) &
( FA4_FAMILIES=sm80 FA4_DB=/tmp/fw.db FA4_TEST_ONLY="grid window softcap" timeout 230 build/tests/test_gpu_forward > $O/forward.log 2>&1; echo "exit $?" >> $O/forward.log ) &
( FA4_DB=/tmp/sv.db timeout 230 build/tests/test_gpu_serving > $O/serving.log 2>&1; echo "exit $?" >> $O/serving.log ) &
wait
echo "checked $(( $(date +%s) - T0 )) s"
echo "sweep: $(grep -E 'variants \(' $O/sweep.txt | tail -1) $(tail -1 $O/sweep.txt)"; grep '^FAIL\|COMPILE FAIL' $O/sweep.txt | head -4 | cut -c1-250
for t in forward serving; do echo "$t: $(grep -c '^ok' $O/$t.log) ok, $(grep -c '^not ok' $O/$t.log) not ok, $(tail -1 $O/$t.log) $(grep '^1\.\.' $O/$t.log)"; grep -A3 '^not ok' $O/$t.log | head -8; done
export FA4_DB=/tmp/pb.db FA4_FAMILIES=sm80
S="swizzle=128 splits=0"
for shape in "--batch 32 --seqlen-q 512" "--batch 32 --seqlen-q 512 --causal" "--batch 8 --seqlen-q 2048" "--batch 8 --seqlen-q 2048 --causal" "--batch 1 --seqlen-q 16384" "--batch 1 --seqlen-q 16384 --causal"; do
  echo "== d256 $shape"
  build/bench/plan_bench --rounds 7 --heads-q 8 --head-dim 256 $shape --heuristic \
    --config "sm80 bm=64 bn=64 stages=1 warps=4 $S" \
    --config "sm80 bm=64 bn=32 stages=2 warps=4 $S" \
    --config "sm80 bm=64 bn=32 stages=2 warps=4 fused_kv=1 $S" \
    --config "sm80 bm=64 bn=64 stages=1 warps=4 rescale=8 $S" \
    --config "sm80 bm=128 bn=64 stages=1 warps=8 $S" 2>&1 | grep -E "source=|gain"
done > $O/d256.txt
cat $O/d256.txt | cut -c1-200
echo "total $(( $(date +%s) - T0 )) s"
