#!/bin/bash
# The first run of the sm100 family on real hardware: correctness, then memory and
# synchronisation checks, then timings.  Never run yet (no B200 so far).  Run from the
# repository root on a compute capability 10.0 GPU with the build in build/:
#   bench/b200.sh [STEPS]
# STEPS (default: all but tune, in this order):
#   check      the CPU tests of the sm100 path (budget, compile, launch maps)
#   tests      the GPU tests of make check without the opt-in: the sm80 family a B200
#              gets by default must be right (test_api, test_gpu_forward)
#   sweep100   every sm100 variant the enumerator yields (CTA pairs included: their
#              first run of the cluster path) against the float64 CPU
#              reference: bench/sweep, the sm90 sweep's matrix (bf16 and fp16, causal
#              and not, GQA 4/2, LSE, seqlen_q = seqlen_k and not, SWEEP_SEQS) over the
#              head dims sm100 runs (SWEEP_DIMS)
#   decode100  the sm100 decode mode's variants (config bm 32: SWEEP_ONLY=bm=32) on decode
#              steps of 1, 2 and 4 tokens over 17..32k keys (causal and not, LSE), GQA
#              32/4 (group 8: 8 heads x 4 tokens a tile) and 4/4 (one head, tokens
#              packed), DECODE_DIMS; splits chosen per call (the workspace and
#              fa4_combine path) and fixed ones among the enumerated variants
#   sanitize   compute-sanitizer memcheck, racecheck and synccheck on a sample of the
#              sweep (SANITIZE_ONLY variants, SANITIZE_DIMS, SANITIZE_SEQS)
#   compare    bench/compare.py with the opt-in (heuristic sm100 plans) against cuDNN and
#              the other libraries; rows, configs and the GEMM ceiling in $OUT/compare.json
#   compare80  the same with the sm80 family only (what a B200 gets without the opt-in)
#   tune       fa4-tune over one d128 shape, sm100 candidates only (optional)
# Every step's log lands in $OUT; the last lines say which steps failed.  The opt-in
# (FA4_ENABLE_SM100=1) is set for the sm100 steps only.
set -u
O=${OUT:-/tmp/fa4-b200}; mkdir -p "$O"
steps=${1:-"check tests sweep100 decode100 sanitize compare compare80"}
has() { case " $steps " in *" $1 "*) return 0;; esac; return 1; }
failed=""
fail() { failed="$failed $1"; echo "=== $1: FAILED"; }

# Refuse anything but compute capability 10.0: the sm100 kernels are sm_100a cubins.
# The device is libfa4's own device 0 (CUDA's numbering, CUDA_VISIBLE_DEVICES applies).
[ -x build/fa4-tune ] || { echo "b200.sh: no build/fa4-tune; build first (scripts/setup)" >&2; exit 2; }
dev=$(build/fa4-tune space --batch 1 --seqlen-q 128 --heads-q 1 --head-dim 64 --json 2>&1)
cc=$(printf '%s\n' "$dev" | sed -n 's/^ *"cc": \([0-9]*\).*/\1/p' | head -1)
name=$(printf '%s\n' "$dev" | sed -n 's/^ *"name": "\(.*\)",$/\1/p' | head -1)
if [ -z "$cc" ]; then
    echo "b200.sh: no GPU to validate on: $(printf '%s\n' "$dev" | tail -1)" >&2
    exit 2
fi
if [ "$cc" != 100 ]; then
    echo "b200.sh: $name is compute capability $((cc / 10)).$((cc % 10)); the sm100 kernels" \
         "run on 10.0 (B200) only. Nothing was run." >&2
    exit 2
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader 2>/dev/null
echo "b200.sh: $name, steps: $steps, logs in $O"
export FA4_DB=/tmp/fa4-b200.db FA4_SYSTEM_DB= srcdir=$PWD
unset FA4_ENABLE_SM100 FA4_FAMILIES

if has check; then
    for t in test_budget_sm100 test_sm100_compile test_launch_sm100 test_sm100_ptx test_sm100_mask; do
        build/tests/$t > "$O/$t.log" 2>&1 || fail "check $t"
        echo "=== $t ok=$(grep -c '^ok' "$O/$t.log") not_ok=$(grep -c '^not ok' "$O/$t.log")"
    done
fi
if has tests; then
    for t in test_api test_gpu_forward; do
        timeout 600 build/tests/$t > "$O/$t.log" 2>&1 || fail "tests $t"
        echo "=== $t ok=$(grep -c '^ok' "$O/$t.log") not_ok=$(grep -c '^not ok' "$O/$t.log")"
        grep -E "^not ok" "$O/$t.log" | head -10
    done
fi
DIMS=${SWEEP_DIMS:-64,96,128,192/128,128/64}
SEQS=${SWEEP_SEQS:-1,17,129,1000,4096}
if has sweep100; then
    echo "=== sweep sm100 ($DIMS x $SEQS)"
    FA4_ENABLE_SM100=1 timeout ${SWEEP_TIMEOUT:-3000} build/bench/sweep sm100 "$DIMS" "$SEQS" \
        > "$O/sweep100.log" 2>&1 || fail sweep100
    grep -E "^(FAIL|COMPILE|PREPARE)" "$O/sweep100.log" | head -20
    grep -E "^SWEEP" "$O/sweep100.log"
fi
if has decode100; then
    for heads in 32/4 4/4; do
        echo "=== sweep sm100 decode mode, heads $heads (${DECODE_DIMS:-64,128,256,192/128})"
        FA4_ENABLE_SM100=1 SWEEP_ONLY="bm=32" SWEEP_DECODE=1,2,4 SWEEP_HEADS=$heads \
            timeout ${SWEEP_TIMEOUT:-3000} build/bench/sweep sm100 \
            "${DECODE_DIMS:-64,128,256,192/128}" "${DECODE_SEQS:-17,1000,4096,32768}" \
            > "$O/decode100-${heads%/*}.log" 2>&1 || fail "decode100 $heads"
        grep -E "^(FAIL|COMPILE|PREPARE)" "$O/decode100-${heads%/*}.log" | head -20
        grep -E "^SWEEP" "$O/decode100-${heads%/*}.log"
    done
fi
if has sanitize; then
    PATH=$PATH:${CUDA_HOME:-/usr/local/cuda}/bin
    if ! command -v compute-sanitizer > /dev/null; then
        fail "sanitize (no compute-sanitizer on PATH)"
    else
        for tool in memcheck racecheck synccheck; do
            echo "=== compute-sanitizer --tool $tool"
            FA4_ENABLE_SM100=1 SWEEP_ONLY=${SANITIZE_ONLY:-"exp2_emu=25 rescale=8"} \
                timeout ${SANITIZE_TIMEOUT:-1800} compute-sanitizer --tool $tool --error-exitcode 3 \
                build/bench/sweep sm100 "${SANITIZE_DIMS:-64,128,128/64}" "${SANITIZE_SEQS:-17,129}" \
                > "$O/sanitize-$tool.log" 2>&1 || fail "sanitize $tool"
            grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^SWEEP" "$O/sanitize-$tool.log" | head -5
        done
    fi
fi
PEERS=${PEERS:-../shared/peers}    # FA4-CuTe for compare.py; a missing one is a '-' column
if { has compare || has compare80; } && [ -d "$PEERS" ]; then
    bash "$PEERS/install.sh" /tmp/peers-site > /dev/null 2>&1 &&
        export PYTHONPATH=/tmp/peers-site${PYTHONPATH:+:$PYTHONPATH}
fi
if has compare; then
    echo "=== compare, sm100 heuristic plans"
    FA4_ENABLE_SM100=1 PYTHONUNBUFFERED=1 timeout 900 python3 bench/compare.py \
        --lib build/.libs/libfa4.so --json "$O/compare.json" ${COMPARE_ARGS:---dims 64,128 --gqa} \
        > "$O/compare.log" 2>&1 || fail compare
    cut -c1-120 "$O/compare.log" | tail -40
    echo "rows on sm100 plans: $(grep -o '"config": "sm100' "$O/compare.json" 2>/dev/null | wc -l)"
fi
if has compare80; then
    echo "=== compare, sm80 family (the default on a B200)"
    FA4_FAMILIES=sm80 PYTHONUNBUFFERED=1 timeout 900 python3 bench/compare.py \
        --lib build/.libs/libfa4.so --json "$O/compare80.json" ${COMPARE_ARGS:---dims 64,128 --gqa} \
        > "$O/compare80.log" 2>&1 || fail compare80
    grep -A3 "^geomean" "$O/compare80.log"
fi
if has tune; then
    echo "=== tune, sm100 candidates"
    rm -f /tmp/fa4-b200-tune.db
    FA4_ENABLE_SM100=1 timeout 1200 build/fa4-tune tune --family sm100 --batch 4 --seqlen-q 4096 \
        --heads-q 16 --head-dim 128 --db /tmp/fa4-b200-tune.db > "$O/tune.log" 2>&1 || fail tune
    tail -20 "$O/tune.log"
fi
if [ -n "$failed" ]; then
    echo "b200.sh: failed:$failed"
    exit 1
fi
echo "b200.sh: every step passed ($steps)"
