#!/bin/bash
# fa4-tune coarse on the seed rows whose kernels changed since they were tuned
# (stale: the 12 causal rows the head-grouped order changed, and the two d96
# rows of 2026-11-22), from the seed, 60 s budget each.  Rows come as
# arguments "batch seqlen heads_q heads_kv head_dim causal(0/1)"; the database
# is exported to $OUT after every row, so a call cut short keeps what it did.
# Carries _dev; FA4_TEST_ONLY=hgroup test_gpu_forward first when HGROUP=1.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
if [ "${HGROUP:-0}" = 1 ]; then
  FA4_TEST_ONLY=hgroup timeout 200 _dev/tests/test_gpu_forward > $O/hgroup-tests.txt 2>&1
  echo "hgroup tests rc=$? $(grep -c '^ok' $O/hgroup-tests.txt) ok, $(grep -c '^not ok' $O/hgroup-tests.txt) not ok"
fi
db=${DB:-/tmp/tune.db}; [ -f $db ] || cp _dev/rh.db $db
for row in "$@"; do
  set -- $row
  c=""; [ $6 = 1 ] && c=--causal
  timeout 110 _dev/fa4-tune tune --db $db --batch $1 --seqlen-q $2 --heads-q $3 --heads-kv $4 \
     --head-dim $5 $c --strategy coarse --time-budget 60 -j 16 > /tmp/t.txt 2>&1
  echo "== d$5 c=$6 $2 b$1 $3/$4 rc=$?"
  grep -E "default is|stored|kept|in use|confirmed" /tmp/t.txt | cut -c1-260
  { echo "== d$5 c=$6 $2 b$1 $3/$4"; cat /tmp/t.txt; } >> $O/tune-log.txt
  _dev/fa4-tune export --json $O/tuned.json --db $db > /dev/null
done
