#!/bin/bash
# Host time per fa4_forward() before (_lite) and after (_lite2) the per-thread
# tensor-map memo; fp8 against bf16 on the serving paths (after the varlen
# register fix); the Python package's tests.  Carries: _lite, _lite2, _peers.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s9.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
for round in 1 2; do
  for b in _lite _lite2; do
    for shape in "--batch 1 --seqlen-q 128 --heads-q 16 --head-dim 128" \
                 "--batch 1 --seqlen-q 128 --heads-q 16 --head-dim 128 --dtype fp8" \
                 "--batch 4 --seqlen-q 1024 --heads-q 32 --heads-kv 8 --head-dim 128 --causal" \
                 "--batch 64 --seqlen-q 1 --seqlen-k 4096 --heads-q 32 --heads-kv 4 --head-dim 128"; do
      echo "$b round $round: $shape"
      timeout 60 $b/bench/plan_bench $shape --rounds 3 --host-time 1 --heuristic 2>&1 | grep -E "^host|^source" | cut -c1-120
    done
  done
done
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=$(pwd)/python:/tmp/peers-site FA4_LIBRARY=$(pwd)/_lite2/.libs/libfa4.so
for i in 1 2; do
    PYTHONUNBUFFERED=1 timeout 200 python3 bench/fp8_serving.py > $O/fp8-serving-$i.log 2>&1; echo "fp8 run $i rc=$?"
    grep -v Warning $O/fp8-serving-$i.log
done
PYTHONUNBUFFERED=1 timeout 300 python3 python/tests/run.py > $O/python-tests.log 2>&1; echo "python tests rc=$?"
tail -5 $O/python-tests.log
grep -E "^(not ok|FAIL)" $O/python-tests.log | head -20
PYTHONUNBUFFERED=1 timeout 150 python3 bench/softcap_peers.py --backends fa3 > $O/softcap-peers.log 2>&1; echo "softcap rc=$?"
grep -v -E "Warning|INFO" $O/softcap-peers.log
PYTHONUNBUFFERED=1 timeout 120 python3 python/bench_overhead.py > $O/overhead.log 2>&1; echo "overhead rc=$?"; tail -12 $O/overhead.log
