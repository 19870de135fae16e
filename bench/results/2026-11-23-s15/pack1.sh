#!/bin/bash
# GQA packing on the sm90 family: GPU correctness (test_gpu_forward grid
# with every sm90 default also packed, the pack section, the rest; serving
# and fp8 for the shared code), then each GQA config against its packed
# twin, alternating in separate processes, two rounds.  Carries: _dev as build.
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB= FA4_FAMILIES=sm90 FA4_DB=/tmp/bench.db
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
run() { name=$1; shift; ( FA4_DB=/tmp/c-$name.db timeout ${LIMIT:-200} "$@" > $O/gpu-$name.log 2>&1; echo "exit $?" >> $O/gpu-$name.log ) & }
FA4_TEST_ONLY=grid run grid build/tests/test_gpu_forward
FA4_TEST_ONLY=pack,tail,softcap,dynamic,window,exp2 run rest build/tests/test_gpu_forward
run serving build/tests/test_gpu_serving
run fp8 build/tests/test_gpu_fp8
wait
for f in $O/gpu-*.log; do echo "$f: $(grep -c '^ok' $f) ok, $(grep -c '^not ok' $f) not ok, $(tail -1 $f)"; grep '^not ok' $f | head -8; done
grep -E "^(not )?ok.*pack " $O/gpu-rest.log | cut -c1-200
R="stages=2 swizzle=128 q_tiles=1 warps=0 cluster=1 exp2_emu=0 rescale=8"
W2="wgs=2 regs=24/240 bm=128"; W3="wgs=3 regs=32/160 bm=192"
# batch:seqlen:hq:hkv:d:causal|config
CASES=(
"1:16384:32:8:128:1|sm90 $W2 bn=176 $R fused_kv=0 pingpong=1 sched=plain splits=1 late_k=1"
"1:16384:32:8:128:0|sm90 $W3 bn=80 ${R/stages=2/stages=3} fused_kv=0 pingpong=0 sched=plain splits=1 late_k=0"
"4:4096:32:8:128:0|sm90 $W2 bn=176 $R fused_kv=0 pingpong=1 sched=plain splits=1 late_k=1"
"4:4096:32:8:128:1|sm90 $W2 bn=128 $R fused_kv=1 pingpong=0 sched=dynamic splits=1 late_k=1"
"1:8192:64:8:128:1|sm90 $W2 bn=176 $R fused_kv=0 pingpong=1 sched=plain splits=1 late_k=1"
"1:16384:32:4:64:1|sm90 $W3 bn=128 $R fused_kv=0 pingpong=1 sched=plain splits=1 late_k=1"
)
for r in 1 2; do
for c in "${CASES[@]}"; do
    s=${c%%|*}; cfg=${c#*|}
    IFS=: read -r b sq hq hkv d cz <<< "$s"; ca=""; [ "$cz" = 1 ] && ca="--causal"
    for pk in 0 1; do
        t=$(timeout 60 build/bench/plan_bench --batch $b --seqlen-q $sq --heads-q $hq --heads-kv $hkv \
            --head-dim $d $ca --config "$cfg pack_gqa=$pk" 2>&1 | tail -1)
        echo "r$r $s pack=$pk $t" | sed 's/config=.*//'
    done
done
done | tee $O/ab.txt
