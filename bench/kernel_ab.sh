#!/bin/bash
# bench/kernel_ab.sh -- one library binary, two kernel trees: the same
# configs timed on the old sources ($FA4_KERNEL_DIR=OLD) and on the
# library's own, in separate processes alternating, ROUNDS rounds, after
# compiling every variant once into one database (binaries are cached by
# source hash, so each timed process only loads its cubin).
#
#   bench/kernel_ab.sh OLD_KERNELS ROWS [ROUNDS] > ab.txt
#
# OLD_KERNELS: a kernels/ tree (git archive REV kernels | tar -x -C DIR).
# ROWS: one row per line, NAME|plan_bench shape options|config text, e.g.
#   d256c512|--batch 32 --seqlen-q 512 --heads-q 8 --head-dim 256 --causal|sm90 bm=128 ...
# Environment: PLAN_BENCH (build/bench/plan_bench), AB_DB (/tmp/kernel_ab.db).
# Prints "rROUND NAME old|new ms=..." per run, then per row both trees'
# times, the change per round and its median.
set -u
old=$1
rows=$2
rounds=${3:-3}
pb=${PLAN_BENCH:-build/bench/plan_bench}
db=${AB_DB:-/tmp/kernel_ab.db}

run() {   # TREE(old|new) SHAPE CONFIG [plan_bench options]: one process
    local tree=$1 shape=$2 cfg=$3
    shift 3
    if [ "$tree" = old ]; then
        # shellcheck disable=SC2086
        FA4_KERNEL_DIR=$old FA4_DB=$db "$pb" $shape --config "$cfg" "$@"
    else
        # shellcheck disable=SC2086
        FA4_DB=$db "$pb" $shape --config "$cfg" "$@"
    fi
}

while IFS='|' read -r name shape cfg; do
    run old "$shape" "$cfg" --rounds 1 --reps 1 > /dev/null 2>&1 &
    run new "$shape" "$cfg" --rounds 1 --reps 1 > /dev/null 2>&1 &
done < "$rows"
wait
out=$(mktemp)
for r in $(seq 1 "$rounds"); do
    while IFS='|' read -r name shape cfg; do
        for tree in old new; do
            ms=$(run $tree "$shape" "$cfg" 2>&1 | grep '^source' | grep -o 'ms=[0-9.]*')
            echo "r$r $name $tree ${ms:-ms=?}" | tee -a "$out"
        done
    done < "$rows"
done
python3 - "$out" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 4 and f[3].startswith("ms=") and f[3] != "ms=?":
        runs[f[1]][f[2]].append(float(f[3][3:]))
for name, t in runs.items():
    old, new = t["old"], t["new"]
    change = [(b / a - 1) * 100 for a, b in zip(old, new)]
    print(f"{name:14s} old {' '.join('%.4f' % x for x in old)}  new {' '.join('%.4f' % x for x in new)}  "
          f"change {' '.join('%+.1f%%' % c for c in change)}"
          + (f"  median {statistics.median(change):+.1f}%" if change else ""))
PY
rm -f "$out"
