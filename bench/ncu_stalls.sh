#!/bin/bash
# bench/ncu_stalls.sh -- why FA4-CuTe issues more per clock than libfa4 on
# d64 non-causal 16k (same instruction count, ncu_gaps.sh): stall reasons
# per issued instruction and, per SASS line, the warp-stall samples of one
# launch of each kernel (clocks left alone).
#
#   bench/ncu_stalls.sh LIBDIR OUT_DIR   (FA4_AOT_DIR names the FA4-CuTe kernels)
L=$1
OUT=$2
mkdir -p "$OUT"
M="--section WarpStateStats --section SourceCounters --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio"
D64="sm90 bm=192 bn=128 stages=2 swizzle=128 fused_kv=0 wgs=3 regs=32/160 rescale=8 pingpong=1 sched=plain splits=1"
# shellcheck disable=SC2086
ncu --clock-control none --launch-skip 3 --launch-count 1 -k regex:fa4_fwd $M -o "$OUT/lib" \
    "$L/bench/plan_bench" --rounds 1 --reps 2 --batch 1 --seqlen-q 16384 --heads-q 32 --head-dim 64 \
    --config "$D64" > "$OUT/lib.log" 2>&1
echo "lib rc=$?"
# shellcheck disable=SC2086
ncu --clock-control none --profile-from-start off $M -o "$OUT/peer" \
    python3 bench/ncu_peer.py 1 16384 32 32 64 0 > "$OUT/peer.log" 2>&1
echo "peer rc=$?"
for w in lib peer; do
    ncu -i "$OUT/$w.ncu-rep" --page details --print-units base > "$OUT/$w-details.txt" 2>&1
    ncu -i "$OUT/$w.ncu-rep" --page source --print-source sass --csv > "$OUT/$w-sass.csv" 2>&1
    echo "$w: $(wc -l < "$OUT/$w-sass.csv") sass lines"
    grep -E "stalled_.*ratio" "$OUT/$w-details.txt" | sort -k3 -n -r | head -12
done
