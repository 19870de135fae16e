#!/bin/bash
# The committed sm80 v5 tree (d256's bm64 threshold at 8k; d128 bn64 at 32
# rows refused on Blackwell): the serving test in full, the forward test's
# softcap/window/jumps/tail sections under FA4_FAMILIES=sm80 (32-row bn32
# tiles of softcap, varlen and pages now take the lean loop on Hopper),
# d256 16k bm64 against bm128 once more, and a third compare.py run of the
# sm80 family.  Carries: _dev as build.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
T0=$(date +%s)
( FA4_DB=/tmp/sv.db timeout 280 build/tests/test_gpu_serving > $O/serving.log 2>&1; echo "exit $?" >> $O/serving.log ) &
( FA4_FAMILIES=sm80 FA4_DB=/tmp/fw.db FA4_TEST_ONLY="softcap window jumps tail" timeout 280 build/tests/test_gpu_forward > $O/forward.log 2>&1; echo "exit $?" >> $O/forward.log ) &
wait
echo "checked $(( $(date +%s) - T0 )) s"
for t in forward serving; do echo "$t: $(grep -c '^ok' $O/$t.log) ok, $(grep -c '^not ok' $O/$t.log) not ok, $(tail -1 $O/$t.log) $(grep '^1\.\.' $O/$t.log)"; grep -A3 '^not ok' $O/$t.log | head -8; done
export FA4_DB=/tmp/pb.db FA4_FAMILIES=sm80
for shape in "--batch 1 --seqlen-q 16384" "--batch 1 --seqlen-q 16384 --causal"; do
  echo "== d256 $shape"
  build/bench/plan_bench --rounds 11 --heads-q 8 --head-dim 256 $shape --heuristic \
    --config "sm80 bm=64 bn=64 stages=1 warps=4 rescale=8 swizzle=128 splits=0" 2>&1 | grep -E "source=" | sed 's/config=\[/[/' | cut -c1-170
done > $O/d256-16k.txt
cat $O/d256-16k.txt
FA4_DB=/tmp/c.db PYTHONUNBUFFERED=1 timeout 190 python3 bench/compare.py --lib build/.libs/libfa4.so --no-fa4-cute \
    --no-flashinfer --reps 10 --gemm 0 --json "$O/cmp80-run3.json" > "$O/cmp80-run3.txt" 2>&1; echo "cmp rc=$? $(( $(date +%s) - T0 )) s"
grep -A3 "^geomean" $O/cmp80-run3.txt; grep "^256 " $O/cmp80-run3.txt | cut -c1-100
echo "total $(( $(date +%s) - T0 )) s"
