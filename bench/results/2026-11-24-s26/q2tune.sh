#!/bin/bash
# The committed two-Q-slot kernels: the focused sweep again (the slot
# bookkeeping moved), test_gpu_forward, then the eight seed rows whose
# machine code changed re-tuned (coarse) over the seed rehashed to these
# sources (_dev/rh.db), exported.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O/tune; export FA4_SYSTEM_DB=
T0=$(date +%s)
( for sched in persistent dynamic; do
    echo "== sweep sched=$sched bn=128 stages=2 32/8 bf16"
    SWEEP_ONLY="sched=$sched bn=128 stages=2 swizzle=128" SWEEP_DTYPE=bf16 SWEEP_HEADS=32/8 timeout 100 _dev/bench/sweep sm90 64,128 129,1000 2>&1 | tail -3
  done ) > $O/tune/sweep3.txt 2>&1 &
( FA4_DB=/tmp/g1.db timeout 200 _dev/tests/test_gpu_forward > $O/tune/forward.tap 2>&1; echo "exit $?" >> $O/tune/forward.tap ) &
wait
echo "checks $(( $(date +%s) - T0 )) s"
cp _dev/rh.db /tmp/tune.db
timeout 330 _dev/fa4-tune tune --problems bench/results/2026-11-24-s26/q2rows.json --strategy coarse -j 16 \
    --db /tmp/tune.db > $O/tune/tune.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 )) s"
_dev/fa4-tune export --json $O/tune/seed.json --db /tmp/tune.db > /dev/null 2>&1; echo "export rc=$?"
