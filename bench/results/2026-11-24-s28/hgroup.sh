#!/bin/bash
# Causal tiles ordered longest first across groups of heads (FA4_HEAD_GROUP;
# this script ran on an experiment build whose budget read FA4_HEAD_GROUP_OFF,
# not committed).
# A head's query tiles from the longest leave the last heads' longest tiles
# to start last: a greedy simulation of 132 SMs over the grid's causal rows
# puts the plain order's tail at 3.6-7.4% (d64 8k/16k, d128 8k, fp8 16k)
# against 0.7-1.8% grouped.  Correctness first (test_gpu_forward's hgroup,
# ranges and pack sections), then plan_bench on each causal grid row's seed
# config, FA4_HEAD_GROUP_OFF=1 (the old order, same binary) against the
# grouped order, processes alternating, two rounds.
ln -sfn _dev build
export FA4_SYSTEM_DB=
out=${OUT:-/tmp}; mkdir -p $out/hg
FA4_TEST_ONLY="hgroup ranges pack" timeout 240 _dev/tests/test_gpu_forward > $out/hg/tests.txt 2>&1
echo "tests rc=$? ok=$(grep -c '^ok' $out/hg/tests.txt) notok=$(grep -c '^not ok' $out/hg/tests.txt)"; grep '^not ok' $out/hg/tests.txt | head
cp _dev/rh.db /tmp/hg.db
for r in 1 2; do
  for shape in "16 1024 32 32 64" "4 4096 32 32 64" "2 8192 32 32 64" "1 16384 32 32 64" \
               "16 1024 16 16 128" "4 4096 16 16 128" "2 8192 16 16 128" "1 16384 16 16 128" \
               "4 4096 8 8 256" "2 8192 8 8 256" "1 16384 8 8 256" "4 4096 32 8 128" "1 16384 32 8 128"; do
    set -- $shape
    line="r$r d$5 c $2 b$1 $3/$4:"
    for mode in off on; do
      if [ $mode = off ]; then export FA4_HEAD_GROUP_OFF=1; else unset FA4_HEAD_GROUP_OFF; fi
      _dev/bench/plan_bench --batch $1 --seqlen-q $2 --heads-q $3 --heads-kv $4 --head-dim $5 --causal \
        --rounds 7 --reps 10 --db /tmp/hg.db > /tmp/pb.txt 2>&1
      line="$line $mode $(grep '^source' /tmp/pb.txt | sed 's/.*ms=\([0-9.]*\).*/\1/')"
    done
    echo "$line"
  done
done
