#!/bin/bash
# The next block's K/V barriers probed (mbarrier.test_wait) while S is
# computed, the blocking wait at the loop's top only when the probe missed:
# correctness on the probe tree, then HEAD's tree against it, each problem's
# heuristic config, processes alternating, two rounds.  Carries: _dev as build.
ln -sfn _dev build
O=${OUT:-/tmp}/probe; mkdir -p $O; export FA4_SYSTEM_DB=
NEW=$PWD/_dev/kprobe/kernels OLD=$PWD/_dev/kold/kernels
T0=$(date +%s)
( FA4_KERNEL_DIR=$NEW FA4_DB=/tmp/p1.db timeout 200 build/tests/test_gpu_fp8 > $O/fp8.log 2>&1; echo "exit $?" >> $O/fp8.log ) &
( FA4_KERNEL_DIR=$NEW FA4_DB=/tmp/p2.db FA4_TEST_ONLY="jumps half ranges tail pack softcap" timeout 200 build/tests/test_gpu_forward > $O/forward.log 2>&1; echo "exit $?" >> $O/forward.log ) &
wait
for f in fp8 forward; do echo "$f: $(grep -c '^ok' $O/$f.log) ok, $(grep -c '^not ok' $O/$f.log) not ok, $(tail -1 $O/$f.log)"; grep -A3 '^not ok' $O/$f.log | head -6; done
echo "checked $(( $(date +%s) - T0 )) s"
rows=("fp8d128|--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --dtype fp8"
      "d64|--batch 1 --seqlen-q 16384 --heads-q 32 --head-dim 64"
      "d64c|--batch 1 --seqlen-q 16384 --heads-q 32 --head-dim 64 --causal"
      "d128|--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128"
      "d128c|--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --causal"
      "d128x2k|--batch 8 --seqlen-q 2048 --heads-q 16 --head-dim 128"
      "d64c512|--batch 32 --seqlen-q 512 --heads-q 32 --head-dim 64 --causal"
      "d256|--batch 1 --seqlen-q 16384 --heads-q 8 --head-dim 256")
for row in "${rows[@]}"; do IFS='|' read -r n s <<< "$row"
  for t in $OLD $NEW; do FA4_KERNEL_DIR=$t FA4_DB=/tmp/pab.db build/bench/plan_bench $s --rounds 1 --reps 1 --heuristic > /dev/null 2>&1 & done
done; wait
for r in 1 2; do
  for row in "${rows[@]}"; do IFS='|' read -r n s <<< "$row"
    for t in old new; do d=$OLD; [ $t = new ] && d=$NEW
      echo "r$r $n $t $(FA4_KERNEL_DIR=$d FA4_DB=/tmp/pab.db build/bench/plan_bench $s --rounds 7 --heuristic 2>&1 | grep '^source' | grep -o 'ms=[0-9.]*')"
    done
  done
done | tee $O/ab.txt
echo "total $(( $(date +%s) - T0 )) s"
