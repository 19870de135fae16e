#!/bin/bash
# late_k=1 now also packs P among the exponentials (before the rescale's
# branch; late_k=0 compiles to the same SASS as before).  (1) the d64 seed
# configs against their late_k twins, alternating in separate processes,
# two rounds; (2) re-tune the d64 8k/16k rows and the late_k rows most
# affected (d128 causal 8k/16k, GQA 32/8 causal 16k) over the seed, coarse.
# Carries: _dev as build.  Writes $OUT/ab.txt, tune-F.txt, tuned-F.json.
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB= FA4_DB=/tmp/bench.db
T=build/fa4-tune; DB=/tmp/seed.db
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
$T import db/seed/h100-sxm.json --db $DB > /dev/null 2>&1; echo import=$?
B="sm90 bm=192 bn=128 stages=2 swizzle=128 fused_kv=0 wgs=3 regs=32/160 rescale=8 pingpong=1 sched=plain"
for r in 1 2; do
for s in 1:16384:0:splits=0 2:8192:0:splits=0 1:16384:1:splits=1 2:8192:1:splits=1; do
    IFS=: read -r b sq c sp <<< "$s"; cz=""; [ "$c" = 1 ] && cz="--causal"
    for lk in 0 1; do
        t=$(build/bench/plan_bench --batch $b --seqlen-q $sq --heads-q 32 --head-dim 64 $cz \
            --config "$B $sp late_k=$lk" 2>&1 | tail -1)
        echo "r$r d64 $s late_k=$lk $t"
    done
done
done | tee $O/ab.txt | sed 's/config=.*//'
export FA4_DB=/tmp/tune.db
tune() { # batch seqlen heads_q heads_kv d causal
    local cz=""; [ "$6" = 1 ] && cz="--causal"
    timeout ${TLIM:-35} $T tune --batch $1 --seqlen-q $2 --heads-q $3 --heads-kv $4 --head-dim $5 $cz \
        --strategy coarse -j 16 --time-budget ${TB:-15} --db $DB >> $O/tune-F.txt 2>&1
    echo "tune $* rc=$?"
}
tune 1 16384 32 32 64 0; tune 2 8192 32 32 64 0; tune 1 16384 32 32 64 1; tune 2 8192 32 32 64 1
tune 1 16384 16 16 128 1; tune 2 8192 16 16 128 1; tune 1 16384 32 8 128 1
grep -E "^== |stored:|confirmed:" $O/tune-F.txt | cut -c1-240
$T export --json $O/tuned-F.json --db $DB > /dev/null 2>&1; echo export=$?
