#!/bin/bash
# compare.py runs 2 and 3 at the committed tree (as final.sh).  Carries _dev, _peers.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
for r in 2 3; do
  cp _dev/rh.db /tmp/tune.db
  PYTHONUNBUFFERED=1 timeout 200 python3 bench/compare.py --lib build/.libs/libfa4.so --db /tmp/tune.db \
      --dims 64,128,256 --gqa --reps 10 --json "$O/run$r.json" > "$O/run$r.txt" 2>&1
  echo "compare $r rc=$?"; grep -A5 "^geomean" $O/run$r.txt; grep "behind" $O/run$r.txt
done
