#!/bin/sh
# bench/clock_levels.sh -- why one config times at two levels: the same
# plan three times over (issue 10's d256 shape, with and without LSE),
# each round's time next to the SM clock, power and throttle reasons that
# nvidia-smi sampled at that moment.
#
#   bench/clock_levels.sh [BUILD_DIR] [OUT_DIR]
B=${1:-build}
OUT=${2:-clock-levels}
mkdir -p "$OUT"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv,noheader -lms 50 > "$OUT/smi.csv" &
smi=$!
sleep 1
S="--batch 16 --seqlen-q 777 --heads-q 16 --head-dim 256"
# shellcheck disable=SC2086
"$B/bench/plan_bench" $S --rounds 15 --trace 1 --heuristic --heuristic --heuristic > "$OUT/nolse.txt" 2>&1
# shellcheck disable=SC2086
"$B/bench/plan_bench" $S --return-lse --rounds 15 --trace 1 --heuristic --heuristic --heuristic > "$OUT/lse.txt" 2>&1
kill $smi
python3 - "$OUT" <<'PY'
import sys, datetime, bisect
out = sys.argv[1]
smi = []
for line in open(f"{out}/smi.csv"):
    f = [x.strip() for x in line.split(",")]
    try:
        t = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
    except ValueError:
        continue
    smi.append((t, f[1], f[3], f[4], f[5]))
ts = [s[0] for s in smi]
for name in ("nolse", "lse"):
    print(f"== {name}: round source ms | sm clock, power, temp, throttle at that moment")
    for line in open(f"{out}/{name}.txt"):
        if line.startswith("# round"):
            w = line.split()
            t = float(w[8])
            i = min(max(bisect.bisect_left(ts, t) - 1, 0), len(smi) - 1) if smi else -1
            s = smi[i] if i >= 0 else ("", "?", "?", "?", "?")
            print(f"{w[2]:>3} {w[4]} {w[6]} | {s[1]} {s[2]} {s[3]}C {s[4]}")
        elif not line.startswith("#"):
            print(line.rstrip()[:160])
PY
