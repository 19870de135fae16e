#!/bin/bash
# (1) fp8 against bf16 on other short shapes (each default through the
# public API, bf16 from the seed), one round, and GQA 32/8 d128 causal at
# 2k and 4k; (2) test_gpu_fp8 rebuilt with the short causal rule (a.sh ran
# the previous session's binaries: its test results do not count), both
# parts.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
pb() { _dev/bench/plan_bench --rounds 9 --reps 10 "$@" > /tmp/pb.txt 2>/tmp/pb.err
       echo "$(grep '^source' /tmp/pb.txt | sed 's/source=\([^ ]*\) ms=\([0-9.]*\).*config=\[sm90 \(bm=[0-9]* bn=[0-9]* stages=[0-9]*\).*\(sched=[a-z]*\).*/\1=\2 \3 \4/' | tr '\n' ' ') $(head -c 150 /tmp/pb.err)"; }
for row in "8 2048 32 64 1" "8 2048 32 64 0" "8 2048 16 128 0" "4 4096 16 128 0" "8 2048 8 256 1" "8 2048 8 256 0" "8 2048 32 128 1 8" "4 4096 32 128 1 8"; do
  set -- $row; c=; [ $5 = 1 ] && c=--causal
  echo "map fp8 b$1 s$2 h$3 d$4 causal=$5: $(pb --batch $1 --seqlen-q $2 --heads-q $3 ${6:+--heads-kv $6} --head-dim $4 $c --dtype fp8 --heuristic)"
  echo "map bf16 b$1 s$2 h$3 d$4 causal=$5: $(pb --batch $1 --seqlen-q $2 --heads-q $3 ${6:+--heads-kv $6} --head-dim $4 $c --db _dev/rh.db)"
done
FA4_TEST_ONLY=defaults timeout 240 _dev/tests/test_gpu_fp8 > $O/fp8-defaults.txt 2>&1
echo "fp8 defaults rc=$? $(grep -c '^ok' $O/fp8-defaults.txt) ok, $(grep -c '^not ok' $O/fp8-defaults.txt) not ok"
grep '^not ok' $O/fp8-defaults.txt | head
FA4_TEST_ONLY=configs timeout 200 _dev/tests/test_gpu_fp8 > $O/fp8-configs.txt 2>&1
echo "fp8 configs rc=$? $(grep -c '^ok' $O/fp8-configs.txt) ok, $(grep -c '^not ok' $O/fp8-configs.txt) not ok"
grep '^not ok' $O/fp8-configs.txt | head
