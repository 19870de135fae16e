#!/bin/bash
# Softcap with bf16 inputs: Q times scale / cap once per tile in shared
# memory (rounded to bf16, an input rounding), so softcap_scores drops its
# FMUL a score (FA4_Q_PRESCALE in the _dev/kqs tree).  (1) HEAD's kernels
# against kqs, cap 30, 16k, alternating processes; (2) test_gpu_forward's
# softcap section under kqs, as far as its limit allows.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
K=_dev/kqs/kernels H=_dev/headk/kernels
run() { _dev/bench/plan_bench --batch $1 --seqlen-q $2 --heads-q $3 --head-dim $4 $5 --heuristic --rounds 9 --reps 10 2>&1 \
        | grep -E '^source|rror' | sed 's/.* ms=\([0-9.]*\) min=\([0-9.]*\) max=\([0-9.]*\).*/\1 [\2-\3]/'; }
for round in 1 2; do
  for row in "1 16384 16 128" "1 16384 16 128 --causal" "1 16384 32 64 --causal" "1 16384 32 64"; do
    set -- $row
    [ $round = 2 ] && [ "$5" = "" ] && [ $4 = 64 ] && continue
    echo "r$round b$1 s$2 h$3 d$4 $5 cap30 HEAD: $(FA4_KERNEL_DIR=$H run $1 $2 $3 $4 "$5 --softcap 30")  qs: $(FA4_KERNEL_DIR=$K run $1 $2 $3 $4 "$5 --softcap 30")"
  done
done
FA4_TEST_ONLY=softcap FA4_KERNEL_DIR=$K timeout 150 _dev/tests/test_gpu_forward > $O/fwd-softcap.txt 2>&1
echo "softcap rc=$? $(grep -c '^ok' $O/fwd-softcap.txt) ok, $(grep -c '^not ok' $O/fwd-softcap.txt) not ok"; grep -A2 '^not ok' $O/fwd-softcap.txt | head -8
grep -o 'rel err [0-9.e-]*, lse err [0-9.e-]*' $O/fwd-softcap.txt | sort -t' ' -k3 -g | tail -2
