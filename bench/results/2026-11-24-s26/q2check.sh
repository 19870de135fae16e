#!/bin/bash
# Two Q slots: correctness first.  bench/sweep over the persistent-scheduler
# variants (16 and 32 heads so that CTAs run several tiles and both Q slots
# turn), then test_gpu_forward whole (its short dense problems take two Q
# slots under the persistent schedulers).
ln -sfn _dev build
export FA4_SYSTEM_DB=
out=${OUT:-/tmp}; mkdir -p $out/q2
export LD_LIBRARY_PATH=$PWD/_dev/.libs
( for sched in persistent dynamic lpt; do
    echo "== sweep sched=$sched 32/8"
    SWEEP_ONLY="sched=$sched" SWEEP_HEADS=32/8 timeout 80 _dev/bench/sweep sm90 64,128 129,1000 2>&1 | tail -4
  done
  echo "== sweep dynamic 16/16 d96,192/128 causal"
  SWEEP_ONLY="sched=dynamic" SWEEP_HEADS=16/16 SWEEP_CAUSAL=1 timeout 60 _dev/bench/sweep sm90 96,192/128 17,1000 2>&1 | tail -4
) > $out/q2/sweep.txt 2>&1
timeout 170 _dev/tests/test_gpu_forward > $out/q2/forward.tap 2>&1
echo "forward rc=$?" >> $out/q2/forward.tap
grep -c "^ok" $out/q2/forward.tap; grep -c "^not ok" $out/q2/forward.tap
