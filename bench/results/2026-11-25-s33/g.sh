#!/bin/bash
# bf16 d128 non-causal cap 30 on the 192 x 80 tile: the default (no share)
# against 25% and 50%, one source per process, processes alternating,
# three rounds (c.sh's one-process gain of 4% at 25% did not show across
# processes in d.sh).
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
pb() { _dev/bench/plan_bench "$@" --rounds 9 --reps 10 2>&1 | grep -E '^source|rror' | sed 's/ from=.*//; s/source=[^ ]* //'; }
B="sm90 bm=192 bn=80 stages=3 swizzle=128 wgs=3 regs=32/160 rescale=8 pingpong=1 sched=plain splits=0 late_k=1"
for r in 1 2 3; do
  for s in "--batch 1 --seqlen-q 16384" "--batch 2 --seqlen-q 8192"; do
    for t in 0 25 50; do echo "r$r d128 $s cap30 tanh $t: $(pb $s --heads-q 16 --head-dim 128 --softcap 30 --config "$B tanh_poly=$t")"; done
  done
done
