#!/bin/bash
# One device session: correctness first, then timings.  Run from the
# repository root on the GPU machine with the build carried in build/.
#   bench/h100.sh [STEPS]   STEPS: any of api gpu sweep80 sweep90 compare (default: all)
set -u
O=${OUT:-/tmp/fa4-out}; mkdir -p "$O"
steps=${1:-"api gpu sweep80 sweep90 compare"}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
export FA4_DB=/tmp/fa4-bench.db FA4_SYSTEM_DB=
export srcdir=$PWD
has() { case " $steps " in *" $1 "*) return 0;; esac; return 1; }
if has api; then
    echo "=== test_api"; timeout 120 build/tests/test_api > "$O/test_api.log" 2>&1; echo "rc=$?"
    grep -E "^not ok|^# " "$O/test_api.log" | head -20
fi
if has gpu; then
    echo "=== test_gpu_forward (FA4_FAMILIES=${FA4_FAMILIES:-all})"
    timeout 400 build/tests/test_gpu_forward > "$O/test_gpu_forward.log" 2>&1; echo "rc=$?"
    grep -c "^ok" "$O/test_gpu_forward.log"; grep -E "^not ok|SKIP" "$O/test_gpu_forward.log" | head -30
fi
if has sweep80; then
    echo "=== sweep sm80"
    timeout 500 build/bench/sweep sm80 ${SWEEP_DIMS:-64,128,256} ${SWEEP_SEQS:-1,17,129,1000,4096} > "$O/sweep80.log" 2>&1; echo "rc=$?"
    grep -E "^(FAIL|COMPILE)" "$O/sweep80.log" | head -20; grep SWEEP "$O/sweep80.log"
fi
if has sweep90; then
    echo "=== sweep sm90"
    timeout 500 build/bench/sweep sm90 ${SWEEP_DIMS:-64,128,256} ${SWEEP_SEQS:-1,17,129,1000,4096} > "$O/sweep90.log" 2>&1; echo "rc=$?"
    grep -E "^(FAIL|COMPILE)" "$O/sweep90.log" | head -20; grep SWEEP "$O/sweep90.log"
fi
if has compare; then
    echo "=== compare"
    PYTHONUNBUFFERED=1 timeout 500 python3 bench/compare.py --lib build/.libs/libfa4.so ${COMPARE_ARGS:-} 2>&1 | tee "$O/compare.log" | tail -60
fi
