#!/bin/bash
# fp8 against bf16 at this tree, each problem's default through the public
# API, separate processes alternating: d128 16k non-causal and causal (four
# rounds), and a second round of the short rows of e.sh.
ln -sfn _dev build
export FA4_SYSTEM_DB=
run() { _dev/bench/plan_bench --batch $1 --seqlen-q $2 --heads-q $3 --head-dim $4 $5 --heuristic --rounds 9 --reps 10 2>&1 \
        | grep '^source' | sed 's/.* ms=\([0-9.]*\) min=\([0-9.]*\) max=\([0-9.]*\).*/\1 [\2-\3]/'; }
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
for round in 1 2 3 4; do
  for c in "" --causal; do
    echo "r$round d128 16k $c fp8: $(run 1 16384 16 128 "$c --dtype fp8")"
    echo "r$round d128 16k $c bf16: $(run 1 16384 16 128 "$c")"
  done
done
for row in "16 1024 16 128 1" "16 1024 16 128 0" "8 2048 16 128 1" "8 2048 32 64 0"; do set -- $row
  c=; [ $5 = 1 ] && c=--causal
  echo "r3 b$1 s$2 h$3 d$4 causal=$5 fp8: $(run $1 $2 $3 $4 "$c --dtype fp8")"
  echo "r3 b$1 s$2 h$3 d$4 causal=$5 bf16: $(run $1 $2 $3 $4 "$c")"
done
