#!/bin/bash
# The sm80 family (FA4_FAMILIES=sm80) under softcap 30: its default on the
# running-max tree (_dev/kold) and the constant-max tree (_dev/knew),
# separate processes alternating, two rounds, and the plain problem; then
# correctness: test_gpu_forward's softcap section (both families, the range
# test) and test_gpu_serving (sm80 decode with softcap).  Carries: _dev as build.
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
( FA4_DB=/tmp/t.db FA4_TEST_ONLY=softcap timeout 150 build/tests/test_gpu_forward > $O/fwd.log 2>&1; echo "exit $?" >> $O/fwd.log )
echo "forward softcap: $(grep -c '^ok' $O/fwd.log) ok, $(grep -c '^not ok' $O/fwd.log) not ok, $(tail -1 $O/fwd.log)"; grep -A2 '^not ok' $O/fwd.log | head
for r in 1 2; do for s in "--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128" "--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --causal" "--batch 1 --seqlen-q 16384 --heads-q 32 --head-dim 64" "--batch 2 --seqlen-q 1 --seqlen-k 8192 --heads-q 32 --heads-kv 8 --head-dim 128"; do
  t=$(FA4_FAMILIES=sm80 FA4_DB=/tmp/n.db FA4_KERNEL_DIR=$PWD/_dev/knew timeout 90 build/bench/plan_bench $s --heuristic 2>&1 | grep "^source" | tail -1 | sed 's/ from=.*//')
  echo "r$r [$s] plain $t"
  for k in kold knew; do
    t=$(FA4_FAMILIES=sm80 FA4_DB=/tmp/$k.db FA4_KERNEL_DIR=$PWD/_dev/$k timeout 90 build/bench/plan_bench $s --softcap 30 --heuristic 2>&1 | grep "^source" | tail -1)
    echo "r$r [$s] cap-$k $t"
  done
done; done | tee $O/sm80.txt
( FA4_DB=/tmp/b.db timeout 230 build/tests/test_gpu_serving > $O/serving.log 2>&1; echo "exit $?" >> $O/serving.log )
echo "serving: $(grep -c '^ok' $O/serving.log) ok, $(grep -c '^not ok' $O/serving.log) not ok, $(tail -1 $O/serving.log)"; grep -A2 '^not ok' $O/serving.log | head
