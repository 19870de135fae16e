#!/bin/bash
# Decode v2 as committed (bn128 in 2 stages only where the tiles fit one
# wave of one CTA per SM): serving_compare.py --only decode twice.
# Carries: _dev as build, _peers.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
for r in 1 2; do
FA4_DB=/tmp/c.db PYTHONUNBUFFERED=1 timeout 100 python3 bench/serving_compare.py --lib build/.libs/libfa4.so --only decode > $O/compare-r$r.txt 2>&1; echo "compare r$r rc=$?"
cut -c1-130 $O/compare-r$r.txt | tail -11
done
