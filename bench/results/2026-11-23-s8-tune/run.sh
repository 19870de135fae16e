#!/bin/bash
# Re-tune the shipped seed's grid on the H100 at the current kernels (coarse), into
# $OUT/tuned-$1.db, exported to $OUT/seed-$1.json.  $1: "grid" (preset fa-grid: its
# 530 s budget reached the d64 and d128 rows) or "rest" (the d256 rows and the four GQA
# rows of compare.py --gqa).  Carries: _lite (build without tests).
set -u
O=$OUT; export FA4_DB=/tmp/s8.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
T=_lite/fa4-tune; DB=$O/tuned-$1.db
if [ "$1" = grid ]; then
    /usr/bin/time -f "tune: %e s" $T tune --preset fa-grid --strategy coarse -j 16 \
        --time-budget ${BUDGET:-530} --db $DB > $O/tune-grid.log 2>&1
else
    for s in 512 1024 2048 4096 8192 16384; do for c in "" --causal; do
        $T tune --batch $((16384 / s)) --seqlen-q $s --heads-q 8 --head-dim 256 $c \
            --strategy coarse -j 16 --time-budget 32 --db $DB >> $O/tune-rest.log 2>&1
    done; done
    for s in 4096 16384; do for c in "" --causal; do
        $T tune --batch $((16384 / s)) --seqlen-q $s --heads-q 32 --heads-kv 8 --head-dim 128 $c \
            --strategy coarse -j 16 --time-budget 32 --db $DB >> $O/tune-rest.log 2>&1
    done; done
fi
tail -3 $O/tune-$1.log
grep -E "^== |default\)" $O/tune-$1.log | cut -c1-160
$T export --json $O/seed-$1.json --db $DB
