#!/bin/bash
# The SM clock and board power under fp8 d128 16k against bf16 (same
# shape, each dtype's default), plan_bench rounds next to nvidia-smi's
# 50 ms samples, A B A B.  Carries: _dev as build.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB= FA4_DB=/tmp/clk.db
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv,noheader -lms 50 > $O/smi.csv &
smi=$!
S="--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128"
build/bench/plan_bench $S --dtype fp8 --rounds 1 --heuristic > /dev/null 2>&1
build/bench/plan_bench $S --rounds 1 --heuristic > /dev/null 2>&1
build/bench/plan_bench --batch 1 --seqlen-q 16384 --heads-q 8 --head-dim 256 --dtype fp8 --rounds 1 --heuristic > /dev/null 2>&1
for r in 1 2; do
  build/bench/plan_bench $S --dtype fp8 --rounds 12 --trace 1 --heuristic > $O/fp8_$r.txt 2>&1
  build/bench/plan_bench $S --rounds 12 --trace 1 --heuristic > $O/bf16_$r.txt 2>&1
  build/bench/plan_bench --batch 1 --seqlen-q 16384 --heads-q 8 --head-dim 256 --dtype fp8 --rounds 12 --trace 1 --heuristic > $O/fp8d256_$r.txt 2>&1
done
kill $smi
python3 - $O <<'PY'
import sys, datetime, bisect, statistics as st, glob, os
out = sys.argv[1]
smi = []
for line in open(f"{out}/smi.csv"):
    f = [x.strip() for x in line.split(",")]
    try:
        t = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        smi.append((t, float(f[1].split()[0]), float(f[2].split()[0]), f[4]))
    except (ValueError, IndexError):
        continue
ts = [s[0] for s in smi]
for path in sorted(glob.glob(f"{out}/*_[12].txt")):
    ms, clk, pw, thr = [], [], [], []
    for line in open(path):
        if line.startswith("# round"):
            w = line.split()
            t = float(w[8]); ms.append(float(w[6].split("=")[-1]) if "=" in w[6] else float(w[6]))
            i = min(max(bisect.bisect_left(ts, t) - 1, 0), len(smi) - 1)
            clk.append(smi[i][1]); pw.append(smi[i][2]); thr.append(smi[i][3])
    if ms:
        print(f"{os.path.basename(path):16s} ms median {st.median(ms):.4f} (min {min(ms):.4f})  SM MHz median {st.median(clk):.0f} (range {min(clk):.0f}-{max(clk):.0f})  W median {st.median(pw):.0f}  throttle {max(set(thr), key=thr.count)}")
    else:
        print(path, "no rounds"); print(open(path).read()[:600])
PY
