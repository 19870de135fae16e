#!/bin/bash
# compare.py over the grid and the GQA rows at the re-tuned seed (RUNS runs,
# default 1), then (D64=1) the d64 non-causal 8k and 16k rows alone at the
# seed (16k: late_k=1) and with the 16k row given the 8k row's config
# (late_k=0), alternating, two rounds each.  Carries _dev, _peers.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
for r in ${RUNS:-1}; do
  cp _dev/rh.db /tmp/tune.db
  PYTHONUNBUFFERED=1 timeout 220 python3 bench/compare.py --lib build/.libs/libfa4.so --db /tmp/tune.db \
      --dims 64,128,256 --gqa --reps 10 --json "$O/run$r.json" > "$O/run$r.txt" 2>&1
  echo "compare run $r rc=$?"; grep -A5 "^geomean" $O/run$r.txt; grep "behind" $O/run$r.txt
done
if [ "${D64:-0}" = 1 ]; then
  for round in 1 2; do for db in rh lk0; do
    cp _dev/$db.db /tmp/d64.db
    PYTHONUNBUFFERED=1 timeout 100 python3 bench/compare.py --lib build/.libs/libfa4.so --db /tmp/d64.db \
        --dims "" --row 2:8192:32/32:64:0 --row 1:16384:32/32:64:0 --no-fa2 --no-flashinfer --gemm 0 \
        --reps 10 > /tmp/d64.txt 2>&1
    echo "d64 round $round db=$db:"; grep -E "^64 " /tmp/d64.txt | cut -c1-100
  done; done
fi
