#!/bin/bash
# compare.py with the libraries' groups in an order shuffled each round
# (time_groups): (D64=1) the six d64 non-causal rows with FA2, twice (in the
# fixed cyclic order FA4-CuTe always followed FA2: d64fa2.sh), then RUNS full
# runs over the grid and the GQA rows at the shipped seed.  Carries _dev, _peers.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
if [ "${D64:-0}" = 1 ]; then
  for round in 1 2; do
    cp _dev/rh.db /tmp/d64.db
    PYTHONUNBUFFERED=1 timeout 150 python3 bench/compare.py --lib build/.libs/libfa4.so --db /tmp/d64.db \
        --dims 64 --causal 0 --no-flashinfer --gemm 0 --reps 10 --json $O/d64s-$round.json > /tmp/d64.txt 2>&1
    echo "d64 shuffled, with FA2, round $round:"; grep -E "^64 " /tmp/d64.txt | cut -c1-100; grep "behind" /tmp/d64.txt
  done
fi
for r in ${RUNS:-}; do
  cp _dev/rh.db /tmp/tune.db
  PYTHONUNBUFFERED=1 timeout 230 python3 bench/compare.py --lib build/.libs/libfa4.so --db /tmp/tune.db \
      --dims 64,128,256 --gqa --reps 10 --json "$O/run$r.json" > "$O/run$r.txt" 2>&1
  echo "compare run $r rc=$?"; grep -A5 "^geomean" $O/run$r.txt | grep -v behind; grep "behind" $O/run$r.txt
done
