#!/bin/bash
# (1) test_gpu_forward's hgroup section with its two fp8 cases, grouped
# (XFP8HG=1); (2) fp8 causal grouped/ungrouped, second round; (3) old and
# new kernel sources (the epilogue change) on the causal seed rows, four
# rounds, and two non-causal rows two more.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
XFP8HG=1 FA4_TEST_ONLY=hgroup timeout 150 _dev/tests/test_gpu_forward > $O/hgroup2.txt 2>&1
echo "hgroup rc=$? $(grep -c '^ok' $O/hgroup2.txt) ok, $(grep -c '^not ok' $O/hgroup2.txt) not ok"
grep '^not ok\|fp8\|e4m3' $O/hgroup2.txt | head
pb() { _dev/bench/plan_bench --rounds 9 --reps 10 "$@" > /tmp/pb.txt 2>/tmp/pb.err
       echo "$(grep '^source' /tmp/pb.txt | sed 's/source=\([^ ]*\) ms=\([0-9.]*\).*/\1=\2/' | tr '\n' ' ') $(head -c 150 /tmp/pb.err)"; }
for shape in "1 16384" "2 8192" "4 4096"; do set -- $shape
  for mode in off on; do
    if [ $mode = on ]; then export XFP8HG=1; else unset XFP8HG; fi
    echo "r2 fp8 c $2 grouped=$mode: $(pb --batch $1 --seqlen-q $2 --heads-q 16 --head-dim 128 --causal --dtype fp8 --heuristic)"
  done
  unset XFP8HG
  echo "r2 bf16 c $2 seed: $(pb --batch $1 --seqlen-q $2 --heads-q 16 --head-dim 128 --causal --db _dev/rh.db)"
done
rows=("1 16384 16 128 1" "2 8192 16 128 1" "1 16384 32 64 1" "2 8192 8 256 1")
for r in 1 2 3 4; do
  for row in "${rows[@]}" "${extra[@]}"; do set -- $row
    c=; [ $5 = 1 ] && c=--causal
    for k in old new; do
      if [ $k = old ]; then export FA4_KERNEL_DIR=$PWD/_dev/oldk; else unset FA4_KERNEL_DIR; fi
      echo "r$r b$1 s$2 h$3 d$4 causal=$5 $k: $(pb --batch $1 --seqlen-q $2 --heads-q $3 --head-dim $4 $c --db _dev/rh.db)"
    done
    unset FA4_KERNEL_DIR
  done
  [ $r = 2 ] && extra=("1 16384 16 128 0" "1 16384 32 64 0")
done
