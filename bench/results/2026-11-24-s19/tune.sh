#!/bin/bash
# Re-tune all 40 seed rows at this tree's kernels (the max-free loop changed
# every sm90 kernel's machine code, so no row could be relabelled), coarse,
# over the shipped seed; the database exported after each set, so a run cut
# at the limit still returns what it tuned.  Writes $OUT/tune.txt and
# $OUT/tuned.json (the next seed).  Carries: _dev as build.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/tune.db FA4_SYSTEM_DB=
T=build/fa4-tune; DB=/tmp/seed.db
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
$T import db/seed/h100-sxm.json --db $DB > /dev/null 2>&1; echo import=$?
tune() { # time-budget batch seqlen heads_q heads_kv d causal
    local tb=$1 cz=""; shift; [ "$6" = 1 ] && cz="--causal"
    timeout $((tb + 20)) $T tune --batch $1 --seqlen-q $2 --heads-q $3 --heads-kv $4 --head-dim $5 $cz \
        --strategy coarse -j 16 --time-budget $tb --db $DB >> $O/tune.txt 2>&1
    echo "tune $* rc=$?"
}
for set in ${ROWS:-d64 gqa d128 d256}; do
    case $set in
    gqa) for s in 4096 16384; do for c in 0 1; do tune 18 $((16384 / s)) $s 32 8 128 $c; done; done ;;
    d64|d128|d256) d=${set#d}
        for s in 512 1024 2048 4096 8192 16384; do for c in 0 1; do
            tune ${TB:-8} $((16384 / s)) $s $((2048 / d)) $((2048 / d)) $d $c; done; done ;;
    esac
    $T export --json $O/tuned.json --db $DB > /dev/null 2>&1; echo "export after $set: $?"
done
grep -E "^== |stored:|confirmed:" $O/tune.txt | cut -c1-260
