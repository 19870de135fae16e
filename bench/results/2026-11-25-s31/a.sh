#!/bin/bash
# The short causal fp8 rule (fp8-short.patch of the thirtieth session,
# applied): (1) correctness: test_gpu_forward's hgroup section (the fused
# fp8 case among them) and test_gpu_fp8's defaults (the 2 x 1000 causal
# case now takes the fused 128x128 dynamic tile, the 4k causal GQA 8/2 one
# 192x96 grouped); (2) fp8 d128 causal defaults against bf16's seed row at
# 1k, 2k and 4k (16k tokens, 16 heads), processes alternating, two rounds
# (first: the tests' time is the harder to predict).
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
pb() { _dev/bench/plan_bench --rounds 9 --reps 10 "$@" > /tmp/pb.txt 2>/tmp/pb.err
       echo "$(grep '^source' /tmp/pb.txt | sed 's/source=\([^ ]*\) ms=\([0-9.]*\).*config=\[sm90 \(bm=[0-9]* bn=[0-9]* stages=[0-9]*\).*\(sched=[a-z]*\).*/\1=\2 \3 \4/' | tr '\n' ' ') $(head -c 150 /tmp/pb.err)"; }
for r in 1 2; do
  for shape in "16 1024" "8 2048" "4 4096"; do set -- $shape
    echo "r$r fp8 c $2: $(pb --batch $1 --seqlen-q $2 --heads-q 16 --head-dim 128 --causal --dtype fp8 --heuristic)"
    echo "r$r bf16 c $2: $(pb --batch $1 --seqlen-q $2 --heads-q 16 --head-dim 128 --causal --db _dev/rh.db)"
  done
done
FA4_TEST_ONLY=hgroup timeout 150 _dev/tests/test_gpu_forward > $O/hgroup.txt 2>&1
echo "hgroup rc=$? $(grep -c '^ok' $O/hgroup.txt) ok, $(grep -c '^not ok' $O/hgroup.txt) not ok"
grep '^not ok' $O/hgroup.txt | head
FA4_TEST_ONLY=defaults timeout 300 _dev/tests/test_gpu_fp8 > $O/fp8-defaults.txt 2>&1
echo "fp8 defaults rc=$? $(grep -c '^ok' $O/fp8-defaults.txt) ok, $(grep -c '^not ok' $O/fp8-defaults.txt) not ok"
grep '^not ok' $O/fp8-defaults.txt | head
