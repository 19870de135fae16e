#!/bin/bash
# The PV wait's place in the sm90 consumer loop: kernel trees alternating in
# separate processes (FA4_KERNEL_DIR), the shipped seed's configs.
#   base: this tree; kB: K released after the row sums (the wait follows it);
#   kC: K released after row g's sums (the wait in the middle of the exps;
#       spills in two d64 variants: not timed);
#   kE: K released after the row max (the wait before the exps, after the
#       max: the lightest pin, no variant spills).
# The trees: kernels/ with kB.patch or kE.patch applied (cp -r kernels _exp/kB &&
# patch -d _exp/kB -p1 < bench/results/2026-11-23-s12-waits/kB.patch).
# Carries: build, _exp.  $1: run number.  Writes $OUT/times-$1.txt.
# Before timing, the winner's correctness on the GPU, with the same trees:
#   FA4_KERNEL_DIR=$(pwd)/_exp/kE FA4_FAMILIES=sm90 FA4_TEST_ONLY=grid build/tests/test_gpu_forward
#   (then tail, softcap, dynamic, window; test_gpu_serving; test_gpu_fp8_serving).
export FA4_DB=/tmp/bench.db FA4_SYSTEM_DB=
[ -f /tmp/seed.db ] || build/fa4-tune import db/seed/h100-sxm.json --db /tmp/seed.db > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
SHAPES="1:16384:32:32:64:0 1:16384:32:32:64:1 1:16384:16:16:128:0 1:16384:16:16:128:1 1:16384:32:8:128:1 4:4096:16:16:128:1 1:16384:8:8:256:0 8:2048:32:32:64:0"
for r in 1 2; do
for s in $SHAPES; do
    IFS=: read -r b sq hq hkv d c <<< "$s"
    cz=""; [ "$c" = 1 ] && cz="--causal"
    for v in kernels _exp/kB _exp/kE; do
        t=$(FA4_KERNEL_DIR=$(pwd)/$v build/bench/plan_bench --batch $b --seqlen-q $sq --heads-q $hq --heads-kv $hkv \
            --head-dim $d $cz --db /tmp/seed.db 2>&1 | tail -1)
        echo "r$r $s ${v##*/} $t"
    done
done
done
