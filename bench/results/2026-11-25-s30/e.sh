#!/bin/bash
# fp8 against bf16, d128 causal 16k and 8k tokens (issue 12's 1.4x), the
# order of the two processes alternating each round (in d.sh the fp8 16k
# run always followed bf16's non-causal 16k one), 2 s apart, four rounds.
ln -sfn _dev build
export FA4_SYSTEM_DB=
pb() { sleep 2; _dev/bench/plan_bench --rounds 9 --reps 10 "$@" > /tmp/pb.txt 2>/tmp/pb.err
       echo "$(grep '^source' /tmp/pb.txt | sed 's/source=\([^ ]*\) ms=\([0-9.]*\).*/\1=\2/' | tr '\n' ' ') $(head -c 150 /tmp/pb.err)"; }
f8() { echo "r$r fp8 c $2: $(pb --batch $1 --seqlen-q $2 --heads-q 16 --head-dim 128 --causal --dtype fp8 --heuristic)"; }
bf() { echo "r$r bf16 c $2: $(pb --batch $1 --seqlen-q $2 --heads-q 16 --head-dim 128 --causal --db _dev/rh.db)"; }
for r in 1 2 3 4; do
  for shape in "1 16384" "2 8192"; do
    if [ $((r % 2)) = 1 ]; then f8 $shape; bf $shape; else bf $shape; f8 $shape; fi
  done
done
