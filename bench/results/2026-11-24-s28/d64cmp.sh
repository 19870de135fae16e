#!/bin/bash
# Why compare.py's d64 non-causal 16k row (b1) runs 2-4% slower per FLOP than its
# 8k row (b2) when plan_bench and the tuner find 16k as fast per FLOP: compare.py
# on those rows with the seed (A) and with both rows on the persistent fused
# late_k config that plan_bench found 1.5% faster (B), A B A B; then plan_bench
# on the 16k seed config with warm and rotated L2 (compare.py reuses one buffer
# set; plan_bench rotates). Inputs differ too: compare.py N(0,1), plan_bench
# uniform [-1, 1].
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O/cmp; export FA4_SYSTEM_DB=
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
for r in A1 B1 A2 B2; do
  db=_dev/rh.db; [ ${r:0:1} = B ] && db=_dev/alt.db
  cp $db /tmp/r.db
  PYTHONUNBUFFERED=1 timeout 150 python3 bench/compare.py --lib build/.libs/libfa4.so --db /tmp/r.db \
    --dims 64 --seqlens 8192,16384 --causal 0 --no-fa2 --no-flashinfer --gemm 0 --reps 20 --json /tmp/cmp-$r.json > $O/cmp/$r.txt 2>&1
  echo "== $r rc=$?"; grep -E "^64 " $O/cmp/$r.txt | cut -c1-100
  python3 -c "
import json,sys
for r in json.load(open(sys.argv[1]))['rows']:
    print(r['seqlen'], ' '.join('%s %.1f@%s' % (n, l['tflops'], l.get('sm_mhz') and int(l['sm_mhz'])) for n, l in r['libs'].items() if 'tflops' in l))
" /tmp/cmp-$r.json
done
for run in 1 2; do for l2 in warm rotate; do
  _dev/bench/plan_bench --l2 $l2 --batch 1 --seqlen-q 16384 --heads-q 32 --head-dim 64 --rounds 9 --reps 10 \
     --db _dev/rh.db --db _dev/alt.db > /tmp/pb-$l2-$run.txt 2>&1
  echo "== plan_bench $l2 $run"; grep '^source' /tmp/pb-$l2-$run.txt | cut -c1-60
done; done
