#!/bin/bash
# sm80 family at d128 on 32-row warps: the lean loop (FA4_K_PAIRS: K read in
# mma pair order; FA4_KV_PTRS: K/V addresses stepped) forced on through the
# experiment build's XKP/XKVP environment.  Correctness (sweep, the forward
# test under FA4_FAMILIES=sm80), then plan_bench in separate processes
# alternating, then compare.py's d128 rows with and without.
# Carries: _dev as build (experiment build), _peers.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB= FA4_FAMILIES=sm80
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
T0=$(date +%s)
( XKP=1 XKVP=1 FA4_DB=/tmp/sw.db SWEEP_ONLY="bm=128 bn=64 warps=4" timeout 200 build/bench/sweep sm80 128 1,17,129,1000 > $O/sweep.txt 2>&1; echo "exit $?" >> $O/sweep.txt ) &
( XKP=1 XKVP=1 FA4_DB=/tmp/fw.db timeout 200 build/tests/test_gpu_forward > $O/forward.log 2>&1; echo "exit $?" >> $O/forward.log ) &
wait
echo "checked $(( $(date +%s) - T0 )) s"
echo "sweep: $(grep -E 'variants;' $O/sweep.txt | tail -1) $(tail -1 $O/sweep.txt)"; grep '^FAIL\|COMPILE FAIL' $O/sweep.txt | head -4 | cut -c1-250
echo "forward: $(grep -c '^ok' $O/forward.log) ok, $(grep -c '^not ok' $O/forward.log) not ok, $(tail -1 $O/forward.log)"; grep -A3 '^not ok' $O/forward.log | head -12
export FA4_DB=/tmp/pb.db
B="build/bench/plan_bench --rounds 5 --heads-q 16 --head-dim 128"
for shape in "--batch 1 --seqlen-q 16384" "--batch 1 --seqlen-q 16384 --causal" "--batch 8 --seqlen-q 2048" "--batch 8 --seqlen-q 2048 --causal"; do
  for round in 1 2; do
    for v in 00 11 10 01; do
      r=$(XKP=${v:0:1} XKVP=${v:1:1} $B $shape --heuristic 2>&1 | grep -o 'ms=[0-9.]*' | head -1)
      echo "$shape kp,kvp=$v round $round $r"
    done
  done
done > $O/pb.txt
cat $O/pb.txt
echo "bench $(( $(date +%s) - T0 )) s"
for v in 00 11; do
XKP=${v:0:1} XKVP=${v:1:1} PYTHONUNBUFFERED=1 timeout 120 python3 bench/compare.py --lib build/.libs/libfa4.so --no-fa4-cute \
    --no-flashinfer --dims 128 --reps 10 --gemm 0 --json "$O/cmp$v.json" > "$O/cmp$v.txt" 2>&1; echo "cmp $v rc=$?"
grep "^128 " $O/cmp$v.txt | cut -c1-100; grep -A3 "^geomean" $O/cmp$v.txt
done
echo "total $(( $(date +%s) - T0 )) s"
