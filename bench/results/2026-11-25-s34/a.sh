#!/bin/bash
# Exponentials two at a time (ex2.approx.f16x2, FA4_EX2_F16 = 1 in the
# _dev/k16 kernel tree) against HEAD's kernels, each problem's default:
# (1) correctness under k16: test_gpu_fp8, test_gpu_forward's jumps, exp2,
# ranges and grid sections; (2) plan_bench, processes alternating, 2 rounds.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
K=_dev/k16/kernels H=_dev/headk/kernels
FA4_KERNEL_DIR=$K timeout 100 _dev/tests/test_gpu_fp8 > $O/fp8.txt 2>&1
echo "fp8 rc=$? $(grep -c '^ok' $O/fp8.txt) ok, $(grep -c '^not ok' $O/fp8.txt) not ok"; grep -A2 '^not ok' $O/fp8.txt | head -12
FA4_TEST_ONLY="jumps ranges" FA4_KERNEL_DIR=$K timeout 80 _dev/tests/test_gpu_forward > $O/fwd.txt 2>&1
echo "fwd jumps/ranges rc=$? $(grep -c '^ok' $O/fwd.txt) ok, $(grep -c '^not ok' $O/fwd.txt) not ok"; grep -A2 '^not ok' $O/fwd.txt | head -12
FA4_TEST_ONLY=grid FA4_KERNEL_DIR=$K timeout 80 _dev/tests/test_gpu_forward > $O/grid.txt 2>&1
echo "fwd grid rc=$? $(grep -c '^ok' $O/grid.txt) ok, $(grep -c '^not ok' $O/grid.txt) not ok"; grep -A2 '^not ok' $O/grid.txt | head -12
grep -o 'rel err [0-9.e-]*' $O/grid.txt | sort -k3 -g | tail -3
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
