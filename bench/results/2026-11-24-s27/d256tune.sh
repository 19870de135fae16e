#!/bin/bash
# d256 up to 2k keys under the persistent schedulers (the budget now admits
# 128x64 there; the default takes it): correctness first (bench/sweep over
# the d256 bn64 variants of each persistent scheduler, 16/8 heads so CTAs
# run several tiles; test_gpu_forward whole), then the default against the
# seed's row through the public API, then the six d256 seed rows of 512-2k
# keys re-tuned (coarse) over the seed, exported.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O/tune; export FA4_SYSTEM_DB=
export LD_LIBRARY_PATH=$PWD/_dev/.libs
D=bench/results/2026-11-24-s27
T0=$(date +%s)
( for sched in persistent dynamic lpt; do
    echo "== sweep d256 bn=64 sched=$sched 16/8"
    SWEEP_ONLY="bn=64 sched=$sched" SWEEP_HEADS=16/8 timeout 90 _dev/bench/sweep sm90 256 17,129,1000 2>&1 | tail -3
  done ) > $O/tune/sweep.txt 2>&1 &
( FA4_DB=/tmp/g1.db timeout 200 _dev/tests/test_gpu_forward > $O/tune/forward.tap 2>&1; echo "exit $?" >> $O/tune/forward.tap ) &
wait
echo "checks $(( $(date +%s) - T0 )) s"; cat $O/tune/sweep.txt; echo "forward ok $(grep -c '^ok' $O/tune/forward.tap) not-ok $(grep -c '^not ok' $O/tune/forward.tap)"
cp _dev/seed.db /tmp/seed.db
for run in 1 2; do
  for shape in "32 512" "16 1024" "8 2048"; do set -- $shape
    for causal in "" "--causal"; do
      echo "== d256 b$1 s$2 $causal run $run: heuristic vs seed"
      _dev/bench/plan_bench --batch $1 --seqlen-q $2 --heads-q 8 --head-dim 256 $causal --rounds 11 --reps 10 \
        --heuristic --db /tmp/seed.db 2>&1 | grep '^source' | sed -E 's/ min=.*config=\[sm90 bm=128 / [/; s/ q_tiles.*(sched=[a-z]+ splits=[01]).*\]/ \1]/'
    done
  done
done > $O/tune/default.txt 2>&1
cat $O/tune/default.txt
cp _dev/seed.db /tmp/tune.db
timeout 300 _dev/fa4-tune tune --problems $D/d256rows.json --strategy coarse -j 16 \
    --db /tmp/tune.db > $O/tune/tune.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 )) s"
grep -E "^== |stored|fastest|confirm" $O/tune/tune.txt | cut -c1-250
_dev/fa4-tune export --json $O/tune/seed.json --db /tmp/tune.db > /dev/null 2>&1; echo "export rc=$?"
