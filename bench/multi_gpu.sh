#!/bin/bash
# bench/multi_gpu.sh -- fa4-tune's scaling over the GPUs of one host
# (issue 10 item 8): the same tune with --devices 0 and with --devices all,
# each into a fresh database (so both compile every variant), then both
# wall times, the speed-up, and each worker's breakdown from --json (where
# its wall time went, and its compile threads' time).  Run from the
# repository root on the GPU machine after scripts/setup built ./build:
#
#   bench/multi_gpu.sh [BUILD_DIR]
#
# The tune is the issue's: --preset fa-grid-d128 --shard 0/3 --strategy
# coarse (4 problems, 2 classes of kernel variants), not reduced, with
# --time-budget 0 and a fixed seed; about 30-40 s a run on two H200s.
# MGPU_ARGS replaces those arguments (e.g. adding --max-trials 20 for a
# shorter run).  The JSON reports go to $OUT (or the work directory).
set -u
B=${1:-build}
TUNE="$B/fa4-tune"
ARGS=${MGPU_ARGS:-"--preset fa-grid-d128 --shard 0/3 --strategy coarse --time-budget 0 --seed 1"}
W=$(mktemp -d /tmp/fa4-multi-gpu-XXXXXX)
O=${OUT:-$W}
[ -x "$TUNE" ] || { echo "multi_gpu: build first: no $TUNE" >&2; exit 1; }
command -v python3 >/dev/null || { echo "multi_gpu: python3 reads the JSON" >&2; exit 1; }
export FA4_SYSTEM_DB=
mkdir -p "$O"

NGPU=$(nvidia-smi -L 2>/dev/null | wc -l)
echo "multi_gpu: fa4-tune tune $ARGS"
echo "multi_gpu: $NGPU GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sort | uniq -c | sed 's/^ *//' | paste -sd, -); $(nproc) cores"
[ "$NGPU" -ge 2 ] || echo "multi_gpu: one GPU: --devices all is --devices 0 here; run on a host with two or more"

rc=0
for run in one all; do
    case $run in one) dev=0;; all) dev=all;; esac
    rm -f "$W/$run.db"*
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    timeout 400 "$TUNE" tune $ARGS --devices $dev --db "$W/$run.db" --json --quiet \
        > "$O/multi_gpu_$run.json" 2> "$W/$run.err"
    st=$?
    t1=$(date +%s.%N)
    echo "$t0 $t1" > "$W/$run.wall"
    if [ $st != 0 ]; then
        echo "multi_gpu: --devices $dev: exit $st" >&2
        sed 's/^/  /' "$W/$run.err" | head -20 >&2
        rc=1
    fi
done

python3 - "$O/multi_gpu_one.json" "$O/multi_gpu_all.json" "$W/one.wall" "$W/all.wall" <<'EOF'
import json, sys

def load(path, wall):
    try:
        doc = json.load(open(path))
    except Exception as e:
        print("multi_gpu: %s: %s" % (path, e))
        doc = None
    t0, t1 = map(float, open(wall).read().split())
    return doc, t1 - t0

runs = [("--devices 0",) + load(sys.argv[1], sys.argv[3]),
        ("--devices all",) + load(sys.argv[2], sys.argv[4])]

print()
print("%-14s %8s %8s %9s %8s %8s" % ("run", "wall s", "json s", "compiles",
                                    "problems", "stored"))
for name, doc, wall in runs:
    if not doc:
        print("%-14s %8.1f  (no report)" % (name, wall))
        continue
    probs = doc["problems"]
    print("%-14s %8.1f %8.1f %9d %8d %8d" % (
        name, wall, doc["seconds"], doc.get("compiles", -1), len(probs),
        sum(1 for p in probs if p.get("stored"))))
(_, d1, w1), (_, d2, w2) = runs
if d1 and d2:
    print("speed-up: %.2fx (wall, --devices all over --devices 0, %d GPU%s)" % (
        w1 / w2, len(d2["workers"]), "" if len(d2["workers"]) == 1 else "s"))

print()
print("per worker, seconds of its wall time (setup is before it), and its compile")
print("threads' builds: NVRTC compiles, variants reused, thread-seconds")
cols = ["setup", "prepare", "waiting", "loading", "timing", "database", "other",
        "idle"]
bcols = ["compile", "slot_wait", "shared_wait", "cache_io"]
print("%-14s %3s %5s %6s " % ("run", "dev", "probs", "wall") +
      " ".join("%8s" % c[:8] for c in cols) + " | %8s %6s " % ("compiles", "reused") +
      " ".join("%11s" % c for c in bcols))
for name, doc, wall in runs:
    for w in (doc or {}).get("workers", []):
        ph, b = w["phases"], w["builds"]
        print("%-14s %3d %5d %6.1f " % (name, w["device"], w["problems"], w["seconds"]) +
              " ".join("%8.2f" % ph[c] for c in cols) +
              " | %8d %6d " % (b["compiles"], b["reused"]) +
              " ".join("%11.1f" % b[c] for c in bcols))

print()
print("per problem")
for name, doc, wall in runs:
    for p in (doc or {}).get("problems", []):
        ph = p.get("phases", {})
        print("%-14s %-34s %6.1f s  prepare %5.2f waiting %6.2f loading %5.2f "
              "timing %6.2f database %5.2f  compiles %d" % (
                  name, p["name"][:34], p.get("seconds", 0), ph.get("prepare", 0),
                  ph.get("waiting", 0), ph.get("loading", 0), ph.get("timing", 0),
                  ph.get("database", 0), p.get("builds", {}).get("compiles", 0)))
EOF
echo "multi_gpu: reports in $O/multi_gpu_one.json and $O/multi_gpu_all.json"
exit $rc
