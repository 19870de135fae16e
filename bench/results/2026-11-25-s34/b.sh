#!/bin/bash
# a.sh's k16 tree serialised every wgmma (ptxas C7511: the raw scores of
# each pair's second register stayed live into the next Q K^T); exp_row
# now zeroes them.  (1) SASS opcode counts, HEAD against k16, of four
# defaults (cubins built here by the compile probe); (2) a.sh's timing;
# (3) test_gpu_fp8's defaults under k16.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
K=_dev/k16/kernels H=_dev/headk/kernels
for c in _dev/cubins/*.cubin; do
  cuobjdump -sass $c | grep -oE '^\s+/\*[0-9a-f]+\*/\s+[A-Z0-9_.]+' | awk '{print $2}' | sed 's/\..*//' | sort | uniq -c | sort -rn | awk '{printf "%s=%s ", $2, $1}' > $O/$(basename $c .cubin).ops
  echo "$(basename $c): $(tr ' ' '\n' < $O/$(basename $c .cubin).ops | grep -E '^(MUFU|FFMA|FADD|FMUL|F2FP|HADD2|HFMA2|HMUL2|MOV|PRMT|F2F|WARPSYNC|WGMMA|HGMMA)=' | tr '\n' ' ')"
done
run() { _dev/bench/plan_bench --batch $1 --seqlen-q $2 --heads-q $3 --head-dim $4 $5 --heuristic --rounds 9 --reps 10 2>&1 \
        | grep '^source' | sed 's/.* ms=\([0-9.]*\) min=\([0-9.]*\) max=\([0-9.]*\).*/\1 [\2-\3]/'; }
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
for round in 1 2; do
  for row in "1 16384 16 128 --dtype=fp8" "1 16384 16 128 --causal --dtype=fp8" "1 16384 32 64 --dtype=fp8" "1 16384 8 256 --dtype=fp8" \
             "1 16384 16 128 --dtype=fp16" "1 16384 16 128" "1 16384 32 64" "1 16384 32 64 --causal"; do
    set -- $row; a="$5 $6"; a=${a//=/ }
    echo "r$round b$1 s$2 h$3 d$4 $a HEAD: $(FA4_KERNEL_DIR=$H run $1 $2 $3 $4 "$a")  f16x2: $(FA4_KERNEL_DIR=$K run $1 $2 $3 $4 "$a")"
  done
done
FA4_TEST_ONLY=defaults FA4_KERNEL_DIR=$K timeout 120 _dev/tests/test_gpu_fp8 > $O/fp8.txt 2>&1
echo "fp8 defaults rc=$? $(grep -c '^ok' $O/fp8.txt) ok, $(grep -c '^not ok' $O/fp8.txt) not ok"; grep -A2 '^not ok' $O/fp8.txt | head -12
