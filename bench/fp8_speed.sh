#!/bin/sh
# bench/fp8_speed.sh -- fp8 e4m3 against bf16 through the library
# (bench/plan_bench: fresh process, back-to-back launches, inputs rotated
# beyond L2), 16k tokens per shape: d64/d128/d256, causal and not.  Each
# shape: bf16's heuristic, then fp8's heuristic and the explicit fp8
# configs in FP8_CONFIGS (one per line).  Prints plan_bench's lines; the
# TFLOP/s are 4 * b * hq * sq * sk * d (/2 causal) / time.
#
#   bench/fp8_speed.sh [BUILD_DIR]
B=${1:-build}
PB="$B/bench/plan_bench"
for shape in "128 0" "128 1" "256 0" "64 0" "64 1" "256 1"; do
    set -- $shape
    d=$1; causal=$2
    S="--batch 1 --seqlen-q 16384 --heads-q $((2048 / d)) --head-dim $d"
    [ "$causal" = 1 ] && S="$S --causal"
    echo "## d$d causal=$causal"
    # shellcheck disable=SC2086
    "$PB" $S --heuristic 2>&1 | grep -v "^#"
    case $d in
    64)  C1="sm90 bm=192 bn=128 stages=2 swizzle=64 wgs=3 regs=32/160 pingpong=1 rescale=8"
         C2="sm90 bm=128 bn=192 stages=2 swizzle=64 wgs=2 regs=24/240 pingpong=1 rescale=8";;
    128) C1="sm90 bm=128 bn=192 stages=2 swizzle=64 wgs=2 regs=24/240 pingpong=1 rescale=8"
         C2="sm90 bm=128 bn=128 stages=3 swizzle=128 fused_kv=1 wgs=2 regs=24/240 pingpong=1 rescale=8";;
    256) C1="sm90 bm=128 bn=64 stages=3 swizzle=64 wgs=2 regs=24/240 pingpong=1 rescale=8"
         C2="sm90 bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 pingpong=0 rescale=8";;
    esac
    # shellcheck disable=SC2086
    "$PB" $S --dtype fp8 --heuristic --config "$C1" --config "$C2" 2>&1 | grep -v "^#"
done
