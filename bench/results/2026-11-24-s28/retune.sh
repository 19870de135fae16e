#!/bin/bash
# fa4-tune coarse on the 12 causal seed rows whose kernels the head-grouped
# order changed (stale after the rehash), from the seed, 60 s budget each;
# the database comes back as JSON for the seed.  Carries _dev.
# (Ran past the device call's 600 s limit before the export: nothing came
# back, and the session's device time was spent.)
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
cp _dev/rh.db /tmp/tune.db
for row in "4 4096 32 32 64" "2 8192 32 32 64" "1 16384 32 32 64" "8 2048 16 16 128" "4 4096 16 16 128" \
           "2 8192 16 16 128" "1 16384 16 16 128" "8 2048 8 8 256" "4 4096 8 8 256" "2 8192 8 8 256" \
           "4 4096 32 8 128" "1 16384 32 8 128"; do
  set -- $row
  timeout 110 _dev/fa4-tune tune --db /tmp/tune.db --batch $1 --seqlen-q $2 --heads-q $3 --heads-kv $4 \
     --head-dim $5 --causal --strategy coarse --time-budget 60 -j 16 > /tmp/t.txt 2>&1
  echo "== d$5 c $2 b$1 $3/$4 rc=$? $(grep -E 'stored:' /tmp/t.txt | cut -c1-60) $(grep -oE '\((default|in use|default, in use)\) at [0-9.]+ ms|at [0-9.]+ ms' /tmp/t.txt | tail -1)"
  grep -E "confirmed:" /tmp/t.txt | cut -c1-200
done
_dev/fa4-tune export --json $O/tuned.json --db /tmp/tune.db
