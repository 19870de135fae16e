#!/bin/bash
# fa4-tune coarse on the d64 non-causal 8k and 16k rows from the seed, with
# the tuner's own time budget (an outer 120 s limit cut the first attempt).
ln -sfn _dev build
export FA4_SYSTEM_DB=
cp _dev/rh.db /tmp/tune.db
for row in "2 8192" "1 16384"; do
  set -- $row
  timeout 250 _dev/fa4-tune tune --db /tmp/tune.db --batch $1 --seqlen-q $2 --heads-q 32 --head-dim 64 \
     --strategy coarse --time-budget 150 -j 16 > /tmp/tune-$2.txt 2>&1
  echo "== tune d64 $2 rc=$?"; grep -E "space|built|^ +[1-5] |default is|stored|confirmed|repeat" /tmp/tune-$2.txt | cut -c1-330
done
_dev/fa4-tune export --json - --db /tmp/tune.db 2>/dev/null | python3 -c "
import json,sys; d=json.load(sys.stdin)
for w in d['winners']:
    k=w['key']
    if k['head_dim_qk']==64 and k['causal']==0 and k['seqlen_q_bucket']>=8192: print(k['seqlen_q_bucket'], w['median_ms'], w['config'])"
