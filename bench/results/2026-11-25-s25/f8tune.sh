#!/bin/bash
# fa4-tune (coarse) on fp8 d128 16k causal and non-causal: does a config beat
# the heuristic now that the timings run on finite inputs as the tuner's do?
ln -sfn _dev build
export FA4_SYSTEM_DB=
out=${OUT:-/tmp}; mkdir -p $out/f8tune
for c in "--causal" ""; do
  n=$([ -n "$c" ] && echo causal || echo nc)
  timeout 280 _dev/fa4-tune tune --db /tmp/t_$n.db --batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 \
     --dtype fp8 $c --strategy coarse --time-budget 150 -j 16 > $out/f8tune/$n.txt 2>&1
  echo "== $n rc=$?"; tail -12 $out/f8tune/$n.txt
done
