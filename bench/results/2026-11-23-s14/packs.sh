#!/bin/bash
# P packed before the rescale's branch (kernels/, this tree) against the
# loop as landed (_kold/kernels, HEAD): GPU correctness of the new tree
# first (test_gpu_forward sections, serving, fp8 serving, in parallel),
# then both trees alternating in separate processes, the seed's configs
# (fp8: the heuristic), two rounds.  Carries: _dev as build, _kold.
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB= FA4_FAMILIES=sm90
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
build/fa4-tune import db/seed/h100-sxm.json --db /tmp/seed.db > /dev/null 2>&1; echo import=$?
tree=$(pwd)/kernels
run() { name=$1; shift; ( FA4_DB=/tmp/c-$name.db FA4_KERNEL_DIR=$tree timeout ${LIMIT:-280} "$@" > $O/new-$name.log 2>&1; echo "exit $?" >> $O/new-$name.log ) & }
FA4_TEST_ONLY=grid run grid build/tests/test_gpu_forward
FA4_TEST_ONLY=tail,softcap,dynamic,window,exp2 run rest build/tests/test_gpu_forward
run serving build/tests/test_gpu_serving
run fp8 build/tests/test_gpu_fp8_serving
wait
for f in $O/new-*.log; do echo "$f: $(grep -c '^ok' $f) ok, $(grep -c '^not ok' $f) not ok, $(tail -1 $f)"; grep '^not ok' $f | head -5; done
export FA4_DB=/tmp/bench.db
SHAPES="1:16384:32:32:64:0:bf16 1:16384:32:32:64:1:bf16 8:2048:32:32:64:0:bf16 1:16384:16:16:128:0:bf16 1:16384:16:16:128:1:bf16 4:4096:16:16:128:1:bf16 1:16384:32:8:128:1:bf16 1:16384:8:8:256:0:bf16 1:16384:16:16:128:0:fp8 1:16384:16:16:128:1:fp8"
for r in 1 2; do
for s in $SHAPES; do
    IFS=: read -r b sq hq hkv d c dt <<< "$s"
    cz=""; [ "$c" = 1 ] && cz="--causal"
    for v in _kold/kernels kernels; do
        t=$(FA4_KERNEL_DIR=$(pwd)/$v build/bench/plan_bench --batch $b --seqlen-q $sq --heads-q $hq --heads-kv $hkv \
            --head-dim $d --dtype $dt $cz --db /tmp/seed.db 2>&1 | tail -1)
        echo "r$r $s ${v%%/*} $t"
    done
done
done | tee $O/times.txt
