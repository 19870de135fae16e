#!/bin/bash
# d64 non-causal 16k inside a grid: compare.py on the six d64 non-causal rows
# (512-16k) with FA2 timed between the groups and without it, alternating,
# two rounds each: does the 16k row's ratio to FA4-CuTe depend on FA2's long
# calls (and the heat of the rows before), or on libfa4's kernel?
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
for round in 1 2; do for fa2 in with without; do
  extra=(); [ $fa2 = without ] && extra=(--no-fa2)
  cp _dev/rh.db /tmp/d64.db
  PYTHONUNBUFFERED=1 timeout 150 python3 bench/compare.py --lib build/.libs/libfa4.so --db /tmp/d64.db \
      --dims 64 --causal 0 --no-flashinfer --gemm 0 --reps 10 "${extra[@]}" \
      --json $O/d64-$round-$fa2.json > /tmp/d64.txt 2>&1
  echo "round $round $fa2 FA2:"; grep -E "^64 " /tmp/d64.txt | cut -c1-100; grep "behind" /tmp/d64.txt
done; done
