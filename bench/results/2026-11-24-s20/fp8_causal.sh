#!/bin/bash
# fp8 under a causal mask: its 16k rows against own bf16 (issue 12's
# causal target: >= 1.4x), each dtype's default through plan_bench (two
# rounds, separate processes), then an exhaustive tune of fp8 d128 and
# d256 causal 16k (55 s each) over an empty database.  Carries: _dev.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
for r in 1 2; do for d in 128 256; do for t in bf16 fp8; do
  h=$((2048 / d)); dt=""; [ $t = fp8 ] && dt="--dtype fp8"
  x=$(FA4_DB=/tmp/pb.db timeout 60 build/bench/plan_bench --batch 1 --seqlen-q 16384 --heads-q $h --head-dim $d --causal $dt --heuristic 2>&1 | grep '^source' | tail -1)
  echo "r$r d$d causal $t $(echo "$x" | grep -o 'ms=[0-9.]*') $(echo "$x" | grep -o 'bm=[0-9]* bn=[0-9]*.*sched=[a-z]*' | head -1)"
done; done; done | tee $O/fp8c-ab.txt
for d in 128 256; do
  FA4_DB=/tmp/t.db timeout 100 build/fa4-tune tune --batch 1 --seqlen-q 16384 --heads-q $((2048 / d)) --head-dim $d --causal --dtype fp8 \
      --strategy exhaustive -j 16 --time-budget 55 --db /tmp/f8.db >> $O/fp8c-tune.txt 2>&1
  echo "tune d$d rc=$?"
done
grep -E "^== |search:|confirmed:|stored:|fastest" $O/fp8c-tune.txt | cut -c1-300
