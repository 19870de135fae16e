#!/bin/bash
# fp8 against bf16 on the serving paths (bench/fp8_serving.py, two runs), softcap's
# cost at d256 (plan_bench), and FlashInfer's softcap cost (bench/softcap_peers.py,
# its JIT: last, under a time limit).  Carries: _lite (build without tests), _peers.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s9.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=$(pwd)/python:/tmp/peers-site FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot
export PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda FA4_LIBRARY=$(pwd)/_lite/.libs/libfa4.so
for i in 1 2; do
    PYTHONUNBUFFERED=1 timeout 200 python3 bench/fp8_serving.py > $O/fp8-serving-$i.log 2>&1; echo "fp8 run $i rc=$?"
    cat $O/fp8-serving-$i.log | grep -v Warning
done
S="--batch 1 --seqlen-q 16384 --heads-q 8 --head-dim 256"
for c in "" "--causal"; do
    timeout 120 _lite/bench/plan_bench $S $c --heuristic > $O/d256$c-plain.log 2>&1
    timeout 120 _lite/bench/plan_bench $S $c --softcap 30 --heuristic > $O/d256$c-softcap.log 2>&1
    echo "d256 $c:"; grep -h "^source" $O/d256$c-plain.log $O/d256$c-softcap.log | cut -c1-150
done
PYTHONUNBUFFERED=1 timeout ${FI_LIMIT:-240} python3 bench/softcap_peers.py --jit --backends fa3 \
    --shapes 128:16384:0,128:16384:1 > $O/softcap-peers.log 2>&1; echo "softcap peers rc=$?"
grep -v Warning $O/softcap-peers.log | tail -20
