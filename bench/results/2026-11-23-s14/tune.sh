#!/bin/bash
# Re-tune the d64 seed rows at this tree's kernels, over the shipped seed,
# coarse: the two stale ones (512, 1k) and 2k-16k, where the tuner now races
# candidates nearest the config in use first (late_k twins included) and
# confirms a new winner against the config in use.  Writes $OUT/tune-E.txt
# and $OUT/tuned-E.json (the whole database).  Carries: _dev as build.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/tune.db FA4_SYSTEM_DB=
T=build/fa4-tune; DB=/tmp/seed.db
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
$T import db/seed/h100-sxm.json --db $DB > /dev/null 2>&1; echo import=$?
tune() { # batch seqlen heads_q heads_kv d causal
    local cz=""; [ "$6" = 1 ] && cz="--causal"
    timeout ${TLIM:-35} $T tune --batch $1 --seqlen-q $2 --heads-q $3 --heads-kv $4 --head-dim $5 $cz \
        --strategy coarse -j 16 --time-budget ${TB:-15} --db $DB >> $O/tune-E.txt 2>&1
    echo "tune $* rc=$?"
}
for s in 512 1024 2048 4096 8192 16384; do
    tune $((16384 / s)) $s 32 32 64 0; tune $((16384 / s)) $s 32 32 64 1
done
grep -E "^== |stored:|confirmed:|in use" $O/tune-E.txt | cut -c1-240
$T export --json $O/tuned-E.json --db $DB > /dev/null 2>&1; echo export=$?
