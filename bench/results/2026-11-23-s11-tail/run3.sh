#!/bin/bash
# Tail split as the plain grid's default: re-tune the non-causal rows where
# the plain grid competes (d64, d128 at 8k and 16k; GQA 32/8 at 4k and 16k;
# coarse, 40 s each) over the shipped seed, then compare.py on those rows
# (libfa4 from that database, cuDNN, FA4-CuTe), two runs.  Carries: _lite, _peers.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s11.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
T=_lite/fa4-tune; DB=/tmp/seed.db
$T import db/seed/h100-sxm.json --db $DB > /dev/null 2>&1; echo import=$?
for spec in "2 8192 32 32 64" "1 16384 32 32 64" "2 8192 16 16 128" "1 16384 16 16 128" "4 4096 32 8 128" "1 16384 32 8 128"; do
  set -- $spec
  timeout 60 $T tune --batch $1 --seqlen-q $2 --heads-q $3 --heads-kv $4 --head-dim $5 \
      --strategy coarse -j 16 --time-budget 40 --db $DB >> $O/tune.log 2>&1; echo "tune $spec rc=$?"
done
grep -E "^== |winner|default\)" $O/tune.log | cut -c1-200
$T export --json $O/tuned.json --db $DB > /dev/null 2>&1
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site${PYTHONPATH:+:$PYTHONPATH} FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot
export PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
for i in 1 2; do
  PYTHONUNBUFFERED=1 timeout 110 python3 bench/compare.py --lib _lite/.libs/libfa4.so --db $DB \
    --dims "" --row 2:8192:32:64:0 --row 1:16384:32:64:0 --row 2:8192:16:128:0 --row 1:16384:16:128:0 \
    --row 4:4096:32/8:128:0 --row 1:16384:32/8:128:0 --no-fa2 --no-flashinfer --gemm 0 --reps 10 \
    --json $O/compare$i.json > $O/compare$i.txt 2>&1
  echo "compare $i rc=$?"; grep -E '^(64|128) ' $O/compare$i.txt | cut -c1-100; grep -E '^(64|128) ' $O/compare$i.txt | grep -o 'sm90 bm=[0-9]* bn=[0-9]*.*splits=[0-9]' | sed 's/q_tiles.*regs=[0-9/]*//' | head -6
done
