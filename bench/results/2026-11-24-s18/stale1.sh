#!/bin/bash
# Exponentials against the stale max (kernels/sm90/softmax.cuh): the new
# jumps section and the softcap/pack sections of test_gpu_forward, the fp8
# test, then plan_bench HEAD's kernels (_dev/kold) against this tree's
# (_dev/knew), separate processes alternating, two rounds.  Carries: _dev as build.
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
( FA4_DB=/tmp/t.db FA4_TEST_ONLY="jumps softcap" timeout 200 build/tests/test_gpu_forward > $O/fwd.log 2>&1; echo "exit $?" >> $O/fwd.log )
echo "forward jumps/softcap: $(grep -c '^ok' $O/fwd.log) ok, $(grep -c '^not ok' $O/fwd.log) not ok, $(tail -1 $O/fwd.log)"; grep -A2 '^not ok' $O/fwd.log | head -20
( FA4_DB=/tmp/t3.db timeout 100 build/tests/test_gpu_fp8 > $O/fp8.log 2>&1; echo "exit $?" >> $O/fp8.log )
echo "fp8: $(grep -c '^ok' $O/fp8.log) ok, $(grep -c '^not ok' $O/fp8.log) not ok, $(tail -1 $O/fp8.log)"; grep -A2 '^not ok' $O/fp8.log | head -8
F8="sm90 bm=128 bn=192 stages=2 swizzle=64 fused_kv=0 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 sched=plain splits=0 pack_gqa=0 pingpong=1"
CASES=(
"--head-dim 128 --heads-q 16 --dtype fp8|$F8 late_k=0"
"--head-dim 128 --heads-q 16 --dtype fp8|$F8 late_k=1"
"--head-dim 128 --heads-q 16|"
"--head-dim 128 --heads-q 16 --causal|"
"--head-dim 64 --heads-q 32|"
"--head-dim 256 --heads-q 8|"
"--head-dim 128 --heads-q 16 --softcap 30|"
)
for r in 1 2; do
  for c in "${CASES[@]}"; do
    IFS='|' read -r shape cfg <<< "$c"
    for k in kold knew; do
      if [ -n "$cfg" ]; then src=(--config "$cfg"); else src=(--heuristic); fi
      t=$(FA4_DB=/tmp/$k.db FA4_KERNEL_DIR=$PWD/_dev/$k timeout 90 build/bench/plan_bench --batch 1 --seqlen-q 16384 $shape "${src[@]}" 2>&1 | grep '^source' | tail -1)
      echo "r$r [$shape] $k $(echo "$t" | grep -o 'ms=[0-9.]*') $(echo "$t" | grep -o 'bm=[0-9]* bn=[0-9]*') $(echo "$t" | grep -o 'late_k=[01]')"
    done
  done
done
