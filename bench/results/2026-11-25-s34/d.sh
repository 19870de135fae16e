#!/bin/bash
# Softcap's constant max needs no overflow check on P, so its row sums can
# come from the tensor cores (P times a ones column, an m64n8 wgmma beside
# each P V step) instead of an FADD a score: FA4_TC_ROWSUM in the _dev/ktc
# tree.  (1) timing first, HEAD's kernels against ktc, cap 30, alternating
# processes, two rounds; (2) test_gpu_forward's softcap section under ktc.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
K=_dev/ktc/kernels H=_dev/headk/kernels
for c in _dev/cubins/*.cubin; do
  echo "$(basename $c): $(cuobjdump -sass $c | grep -oE '^\s+/\*[0-9a-f]+\*/\s+[A-Z0-9_.]+' | awk '{print $2}' | sed 's/\..*//' | sort | uniq -c | awk '$2 ~ /^(MUFU|FFMA|FADD|FMUL|F2FP|HGMMA|MOV)$/ {printf "%s=%s ", $2, $1}')"
done
run() { _dev/bench/plan_bench --batch $1 --seqlen-q $2 --heads-q $3 --head-dim $4 $5 --heuristic --rounds 9 --reps 10 2>&1 \
        | grep -E '^source|rror' | sed 's/.* ms=\([0-9.]*\) min=\([0-9.]*\) max=\([0-9.]*\).*/\1 [\2-\3]/'; }
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
for round in 1 2; do
  for row in "1 16384 16 128" "1 16384 16 128 --causal" "1 16384 32 64" "1 16384 32 64 --causal"; do
    set -- $row
    echo "r$round b$1 s$2 h$3 d$4 $5 cap30 HEAD: $(FA4_KERNEL_DIR=$H run $1 $2 $3 $4 "$5 --softcap 30")  tc: $(FA4_KERNEL_DIR=$K run $1 $2 $3 $4 "$5 --softcap 30")"
  done
done
echo "plain d128 16k: $(FA4_KERNEL_DIR=$H run 1 16384 16 128)"
FA4_TEST_ONLY=softcap FA4_KERNEL_DIR=$K timeout 240 _dev/tests/test_gpu_forward > $O/fwd-softcap.txt 2>&1
echo "softcap rc=$? $(grep -c '^ok' $O/fwd-softcap.txt) ok, $(grep -c '^not ok' $O/fwd-softcap.txt) not ok"; grep -A2 '^not ok' $O/fwd-softcap.txt | head -12
