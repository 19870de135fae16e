#!/bin/bash
# The softcapped d128 16k problems (cap 30) have never been tuned: their
# defaults are the plain problems' tiles.  fa4-tune (coarse, 240 s each)
# on d128 non-causal and causal, then plan_bench in fresh processes,
# the tuned database against the heuristic, alternating, two rounds.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
S="--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --softcap 30"
for c in "" --causal; do
  _dev/fa4-tune tune $S $c --strategy coarse --time-budget 240 -j 16 --db $O/t.db --quiet 2>&1 | tail -4
done
_dev/fa4-tune show --db $O/t.db 2>&1 | tail -4
run() { _dev/bench/plan_bench $S "$@" --rounds 9 --reps 10 2>&1 | grep '^source' | sed 's/ from=.*config=/ /'; }
for r in 1 2; do
  for c in "" --causal; do
    echo "r$r $c tuned:     $(run $c --db $O/t.db)"
    echo "r$r $c heuristic: $(run $c --heuristic)"
  done
done
