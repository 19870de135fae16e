#!/bin/bash
# sm80 v5 defaults (lean loop on 32-row tiles before Blackwell; head dims
# over 128 up to 4k keys in bm 64 CTAs, two per SM): the forward test's grid
# under FA4_FAMILIES=sm80 and a sweep of the bm 64 tiles at d192/128 and
# d256; plan_bench on both sides of the 4k threshold; then compare.py twice
# (FA4_FAMILIES=sm80 against FA2 and cuDNN through SDPA).  Carries: _dev as build.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
T0=$(date +%s)
( FA4_DB=/tmp/sw.db SWEEP_ONLY="bm=64 bn=64 stages=1 warps=4" timeout 120 build/bench/sweep sm80 192/128,256 1,17,129,1000 > $O/sweep.txt 2>&1; echo "exit $?" >> $O/sweep.txt ) &
( FA4_FAMILIES=sm80 FA4_DB=/tmp/fw.db FA4_TEST_ONLY="grid" timeout 120 build/tests/test_gpu_forward > $O/forward.log 2>&1; echo "exit $?" >> $O/forward.log ) &
wait
echo "checked $(( $(date +%s) - T0 )) s"
echo "sweep: $(grep -E 'variants \(' $O/sweep.txt | tail -1) $(tail -1 $O/sweep.txt)"; grep '^FAIL\|COMPILE FAIL' $O/sweep.txt | head -4 | cut -c1-250
echo "forward: $(grep -c '^ok' $O/forward.log) ok, $(grep -c '^not ok' $O/forward.log) not ok, $(tail -1 $O/forward.log) $(grep '^1\.\.' $O/forward.log)"; grep -A3 '^not ok' $O/forward.log | head -8
grep -c "sm80 bm=64 bn=64 stages=1 swizzle=128 fused_kv=0 q_tiles=1 warps=4 wgs=0 regs=0/0 cluster=1 exp2_emu=0 rescale=8" $O/forward.log
export FA4_DB=/tmp/pb.db FA4_FAMILIES=sm80
S="swizzle=128 splits=0"
for shape in "--head-dim 256 --batch 4 --seqlen-q 4096" "--head-dim 256 --batch 4 --seqlen-q 4096 --causal" "--head-dim 256 --batch 2 --seqlen-q 8192" "--head-dim 256 --batch 2 --seqlen-q 8192 --causal" "--head-dim 192 --head-dim-v 128 --batch 8 --seqlen-q 2048" "--head-dim 192 --head-dim-v 128 --batch 8 --seqlen-q 2048 --causal"; do
  echo "== $shape"
  build/bench/plan_bench --rounds 7 --heads-q 8 $shape --heuristic \
    --config "sm80 bm=64 bn=64 stages=1 warps=4 rescale=8 $S" \
    --config "sm80 bm=128 bn=64 stages=2 warps=8 fused_kv=1 $S" 2>&1 | grep -E "source=" | sed 's/ min=.*config=\[/ [/' | cut -c1-160
done > $O/thresh.txt
cat $O/thresh.txt
echo "bench $(( $(date +%s) - T0 )) s"
for r in 1 2; do
FA4_FAMILIES=sm80 FA4_DB=/tmp/c.db PYTHONUNBUFFERED=1 timeout 190 python3 bench/compare.py --lib build/.libs/libfa4.so --no-fa4-cute \
    --no-flashinfer --reps 10 --gemm 0 --json "$O/cmp80-run$r.json" > "$O/cmp80-run$r.txt" 2>&1; echo "cmp $r rc=$? $(( $(date +%s) - T0 )) s"
grep -A3 "^geomean" $O/cmp80-run$r.txt
done
echo "total $(( $(date +%s) - T0 )) s"
