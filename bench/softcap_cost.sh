#!/bin/sh
# bench/softcap_cost.sh -- what softcapping and sinks cost at d128, 16k
# tokens (bf16, bench/plan_bench: fresh process per shape, back-to-back
# launches, inputs rotated beyond L2).  Each shape: the plain problem's
# heuristic, then the softcapped problem's heuristic and its config with
# the exponentials partly on the FMA pipe (tanh and ex2 share MUFU), then
# sinks.  TFLOP/s = 4 * b * hq * sq * sk * d (/2 causal) / time.
#
#   bench/softcap_cost.sh [BUILD_DIR] [SOFTCAP]
B=${1:-build}
CAP=${2:-30}
PB="$B/bench/plan_bench"
for causal in 0 1; do
    S="--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128"
    [ "$causal" = 1 ] && S="$S --causal"
    echo "## d128 16k causal=$causal plain"
    # shellcheck disable=SC2086
    "$PB" $S --heuristic 2>&1 | grep -v "^#"
    echo "## softcap=$CAP"
    cfg=$("$PB" $S --softcap "$CAP" --rounds 1 --heuristic 2>/dev/null |
          sed -n 's/.*config=\[\(.*\)\].*/\1/p' | head -1)
    set --
    for emu in 25 50 75; do
        set -- "$@" --config "$(echo "$cfg" | sed "s/exp2_emu=[0-9]*/exp2_emu=$emu/")"
    done
    # shellcheck disable=SC2086
    "$PB" $S --softcap "$CAP" --heuristic "$@" 2>&1 | grep -v "^#"
    echo "## sinks"
    # shellcheck disable=SC2086
    "$PB" $S --sinks --heuristic 2>&1 | grep -v "^#"
done
