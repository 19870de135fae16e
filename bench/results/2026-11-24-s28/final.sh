#!/bin/bash
# The head-grouped causal order as committed (no switch): test_gpu_forward's
# hgroup, ranges, pack, half and dynamic sections, then compare.py over the
# grid and the GQA rows at the rehashed seed (the 12 causal rows whose
# kernels changed are stale: used, not re-tuned).  Carries _dev, _peers.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
FA4_TEST_ONLY="hgroup ranges pack half dynamic" timeout 200 _dev/tests/test_gpu_forward > $O/tests.txt 2>&1
echo "tests rc=$? ok=$(grep -c '^ok' $O/tests.txt) notok=$(grep -c '^not ok' $O/tests.txt)"; grep '^not ok' $O/tests.txt | head
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
cp _dev/rh.db /tmp/tune.db
PYTHONUNBUFFERED=1 timeout 200 python3 bench/compare.py --lib build/.libs/libfa4.so --db /tmp/tune.db \
    --dims 64,128,256 --gqa --reps 10 --json "$O/run1.json" > "$O/run1.txt" 2>&1
echo "compare rc=$?"; grep -A5 "^geomean" $O/run1.txt; grep "behind" $O/run1.txt
grep -E "^(64|128|256) +yes" $O/run1.txt | cut -c1-112
