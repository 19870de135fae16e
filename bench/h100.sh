#!/bin/bash
# One device session: correctness first, then timings.  Run from the
# repository root on the GPU machine with the build carried in build/.
#   bench/h100.sh [STEPS]
# STEPS (default: all, in this order):
#   tests    the GPU tests of make check (test_api, test_gpu_forward, test_tune_gpu)
#   sweep80  every sm80 variant against the CPU reference (SWEEP_DIMS, SWEEP_SEQS)
#   sweep90  every sm90 variant against the CPU reference
#   tune     fa4-tune over the grid's d128 rows and d64 causal 512..4k into
#            $TUNE_DB, exported to $OUT/seed.json (the shipped seed)
#   plan     plan creation in fresh processes: cold, then warm
#   compare  bench/compare.py with the tuned database ($TUNE_DB), every library timed
#            back to back, rows and GEMM ceiling in $OUT/compare.json (chart:
#            python3 bench/chart.py compare.json -o perf.png); COMPARE_ARGS narrows
#            it (e.g. "--dims 64 --causal 1"); FA4-CuTe from $PEERS when present
#   compare80  bench/compare.py with the sm80 family only
set -u
O=${OUT:-/tmp/fa4-out}; mkdir -p "$O"
steps=${1:-"tests sweep80 sweep90 tune plan compare compare80"}
TUNE_DB=${TUNE_DB:-/tmp/fa4-tuned.db}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
export FA4_DB=/tmp/fa4-bench.db FA4_SYSTEM_DB= srcdir=$PWD
has() { case " $steps " in *" $1 "*) return 0;; esac; return 1; }
if has tests; then
    for t in test_api test_gpu_forward test_tune_gpu; do
        timeout 300 build/tests/$t > "$O/$t.log" 2>&1
        echo "=== $t rc=$? ok=$(grep -c '^ok' "$O/$t.log") not_ok=$(grep -c '^not ok' "$O/$t.log")"
        grep -E "^not ok" "$O/$t.log" | head -10
    done
fi
for fam in 80 90; do
    if has sweep$fam; then
        echo "=== sweep sm$fam"
        timeout ${SWEEP_TIMEOUT:-500} build/bench/sweep sm$fam ${SWEEP_DIMS:-64,128,256} ${SWEEP_SEQS:-1,17,129,1000,4096} \
            > "$O/sweep$fam.log" 2>&1; echo "rc=$?"
        grep -E "^(FAIL|COMPILE)" "$O/sweep$fam.log" | head -20; grep SWEEP "$O/sweep$fam.log"
    fi
done
if has tune; then
    echo "=== tune"
    rm -f "$TUNE_DB"
    /usr/bin/time -f "tune: %e s" build/fa4-tune tune --preset fa-grid-d128 ${TUNE_ARGS:-} --db "$TUNE_DB" > "$O/tune.log" 2>&1
    tail -2 "$O/tune.log"
    for s in 512 1024 2048 4096; do
        build/fa4-tune tune ${TUNE_ARGS:-} --batch $((16384 / s)) --seqlen-q $s --heads-q 32 --head-dim 64 \
            --causal --db "$TUNE_DB" >> "$O/tune.log" 2>&1
    done
    grep -E "^== |^ +1 |default\)" "$O/tune.log" | cut -c1-200
    build/fa4-tune export --json "$O/seed.json" --db "$TUNE_DB"
fi
if has plan; then
    echo "=== plan creation, fresh processes (cold, warm, warm)"
    rm -f /tmp/fa4-plan.db
    for i in 1 2 3; do build/bench/plan_time /tmp/fa4-plan.db 128; done | tee "$O/plan_time.log"
fi
PEERS=${PEERS:-../shared/peers}    # FA4-CuTe for compare.py; a missing one is a '-' column
if has compare && [ -d "$PEERS" ]; then
    bash "$PEERS/install.sh" /tmp/peers-site > /dev/null 2>&1 &&
        export PYTHONPATH=/tmp/peers-site${PYTHONPATH:+:$PYTHONPATH} FA4_AOT_DIR=$(cd "$PEERS" && pwd)/fa4_sm90_aot
fi
if has compare; then
    echo "=== compare (tuned database)"
    PYTHONUNBUFFERED=1 timeout 400 python3 bench/compare.py --lib build/.libs/libfa4.so --db "$TUNE_DB" \
        --json "$O/compare.json" ${COMPARE_ARGS:---gqa} \
        2>&1 | tee "$O/compare.log" | cut -c1-120 | tail -60
fi
if has compare80; then
    echo "=== compare sm80"
    FA4_FAMILIES=sm80 PYTHONUNBUFFERED=1 timeout 300 python3 bench/compare.py --lib build/.libs/libfa4.so \
        --json "$O/compare80.json" > "$O/compare80.log" 2>&1; grep -A3 "^geomean" "$O/compare80.log"
fi
