#!/bin/bash
# Re-tune seed rows at this tree's kernels (late_k in the space), over the
# shipped seed, coarse.  $1: the row set (A d128 causal and GQA causal, B d64
# and the long non-causal d128, C d256, D the rows B stored slower, raced
# against the rows they replaced); writes $OUT/tune-$1.txt and
# $OUT/tuned-$1.json (the whole database: merged into db/seed between calls).
# SEED: the JSON to start from (D: seed-race.json).  Carries: _dev as build.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/tune.db FA4_SYSTEM_DB=
T=build/fa4-tune; DB=/tmp/seed.db
[ -f $DB ] || { $T import ${SEED:-db/seed/h100-sxm.json} --db $DB > /dev/null 2>&1; echo import=$?; }
tune() { # batch seqlen heads_q heads_kv d causal
    local cz=""; [ "$6" = 1 ] && cz="--causal"
    timeout ${TLIM:-45} $T tune --batch $1 --seqlen-q $2 --heads-q $3 --heads-kv $4 --head-dim $5 $cz \
        --strategy coarse -j 16 --time-budget ${TB:-20} --db $DB >> $O/tune-$SET.txt 2>&1
    echo "tune $* rc=$?"
}
SET=$1
case $1 in
A) for s in 512 1024 2048 4096 8192 16384; do tune $((16384 / s)) $s 16 16 128 1; done
   tune 4 4096 32 8 128 1; tune 1 16384 32 8 128 1 ;;
B) for s in 2048 4096 8192 16384; do tune $((16384 / s)) $s 32 32 64 0; tune $((16384 / s)) $s 32 32 64 1; done
   for s in 8192 16384; do tune $((16384 / s)) $s 16 16 128 0; done
   tune 4 4096 32 8 128 0; tune 1 16384 32 8 128 0 ;;
D) tune 4 4096 32 8 128 0; tune 4 4096 32 32 64 0
   for s in 4096 2048 1024 512; do tune $((16384 / s)) $s 16 16 128 0; done ;;
C) for s in 512 1024 2048 4096 8192 16384; do tune $((16384 / s)) $s 8 8 256 1; tune $((16384 / s)) $s 8 8 256 0; done ;;
esac
grep -E "^== |stored:|confirmed:" $O/tune-$SET.txt | cut -c1-230
$T export --json $O/tuned-$SET.json --db $DB > /dev/null 2>&1; echo export=$?
