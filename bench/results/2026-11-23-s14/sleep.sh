#!/bin/bash
# The producer's empty-waits with a suspend-time hint (_kexp: sleep.patch,
# try_wait suspends instead of spinning) against this tree, alternating in
# separate processes, the seed's configs (fp8: the heuristic), two rounds.
# Timing only: GPU correctness of the patch not yet run.  Carries: _dev as
# build, _kexp.  Writes $OUT/sleep.txt.
export FA4_SYSTEM_DB= FA4_DB=/tmp/bench.db
build/fa4-tune import db/seed/h100-sxm.json --db /tmp/seed.db > /dev/null 2>&1
for r in 1 2; do
for s in 1:16384:32:32:64:0:bf16 1:16384:16:16:128:0:bf16 1:16384:16:16:128:1:bf16 1:16384:16:16:128:0:fp8; do
    IFS=: read -r b sq hq hkv d c dt <<< "$s"; cz=""; [ "$c" = 1 ] && cz="--causal"
    for v in kernels _kexp/kernels; do
        t=$(FA4_KERNEL_DIR=$(pwd)/$v build/bench/plan_bench --batch $b --seqlen-q $sq --heads-q $hq --heads-kv $hkv \
            --head-dim $d --dtype $dt $cz --db /tmp/seed.db 2>&1 | tail -1)
        echo "r$r $s ${v%%/*} $t"
    done
done
done | tee $OUT/sleep.txt | sed 's/config=.*//'
