#!/bin/bash
# The O epilogue's addresses from the register index (kernels/sm90/
# epilogue.cuh): every sm90 kernel's machine code changes.  Each seed row's
# config under the old sources (FA4_KERNEL_DIR=_dev/oldk, HEAD's kernels)
# and the new ones, processes alternating, two rounds.
ln -sfn _dev build
export FA4_SYSTEM_DB=
rows=("1 16384 16 128 0" "1 16384 16 128 1" "1 16384 32 64 0" "1 16384 8 256 0"
      "8 2048 16 128 0" "32 512 32 64 1" "4 4096 16 128 0")
for r in 1 2; do
  for row in "${rows[@]}"; do set -- $row
    c=; [ $5 = 1 ] && c=--causal
    for k in old new; do
      if [ $k = old ]; then export FA4_KERNEL_DIR=$PWD/_dev/oldk; else unset FA4_KERNEL_DIR; fi
      _dev/bench/plan_bench --batch $1 --seqlen-q $2 --heads-q $3 --head-dim $4 $c --db _dev/rh.db \
          --rounds 9 --reps 10 > /tmp/pb.txt 2>/tmp/pb.err
      echo "r$r b$1 s$2 h$3 d$4 causal=$5 $k: $(grep '^source' /tmp/pb.txt | sed 's/source=\([^ ]*\) ms=\([0-9.]*\).*/\1=\2/' | tr '\n' ' ') $(head -c 150 /tmp/pb.err)"
    done
    unset FA4_KERNEL_DIR
  done
done
