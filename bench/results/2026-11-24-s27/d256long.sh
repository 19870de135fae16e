#!/bin/bash
# The d256 seed rows of 4k-16k keys re-tuned (coarse, over the committed
# seed) now that the budget admits d256 128x64 under the persistent
# schedulers; exported.  Carries _dev (the committed build), _dev/rh.db.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O/long; export FA4_SYSTEM_DB=
cp _dev/rh.db /tmp/tune.db
timeout 420 _dev/fa4-tune tune --problems bench/results/2026-11-24-s27/d256long.json --strategy coarse -j 16 \
    --db /tmp/tune.db > $O/long/tune.txt 2>&1
echo "tune rc=$?"
grep -E "^== |stored|fastest|confirm|kept" $O/long/tune.txt | cut -c1-260
_dev/fa4-tune export --json $O/long/seed.json --db /tmp/tune.db > /dev/null 2>&1; echo "export rc=$?"
