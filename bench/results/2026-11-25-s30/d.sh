#!/bin/bash
# The committed tree (fp8 causal tiles grouped by heads; the fp8 epilogue's
# constant columns).  (1) test_gpu_forward's hgroup section and the whole
# of test_gpu_fp8; (2) fp8 against bf16 through the public API (each
# problem's default for fp8, the seed's row for bf16), d128, 16k tokens,
# causal 2k-16k and non-causal 16k, processes alternating, three rounds.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
FA4_TEST_ONLY=hgroup timeout 150 _dev/tests/test_gpu_forward > $O/hgroup3.txt 2>&1
echo "hgroup rc=$? $(grep -c '^ok' $O/hgroup3.txt) ok, $(grep -c '^not ok' $O/hgroup3.txt) not ok"
grep '^not ok' $O/hgroup3.txt | head
timeout 240 _dev/tests/test_gpu_fp8 > $O/fp8-all.txt 2>&1
echo "fp8 rc=$? $(grep -c '^ok' $O/fp8-all.txt) ok, $(grep -c '^not ok' $O/fp8-all.txt) not ok"
grep '^not ok' $O/fp8-all.txt | head
pb() { _dev/bench/plan_bench --rounds 9 --reps 10 "$@" > /tmp/pb.txt 2>/tmp/pb.err
       echo "$(grep '^source' /tmp/pb.txt | sed 's/source=\([^ ]*\) ms=\([0-9.]*\).*/\1=\2/' | tr '\n' ' ') $(head -c 150 /tmp/pb.err)"; }
for r in 1 2 3; do
  for shape in "1 16384 c" "2 8192 c" "4 4096 c" "8 2048 c" "1 16384 n"; do set -- $shape
    c=; [ $3 = c ] && c=--causal
    echo "r$r fp8 $3 $2: $(pb --batch $1 --seqlen-q $2 --heads-q 16 --head-dim 128 $c --dtype fp8 --heuristic)"
    echo "r$r bf16 $3 $2: $(pb --batch $1 --seqlen-q $2 --heads-q 16 --head-dim 128 $c --db _dev/rh.db)"
  done
done
