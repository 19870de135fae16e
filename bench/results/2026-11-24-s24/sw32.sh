#!/bin/bash
# fp8 with 32 B swizzle (V^T in 32-key chunks; the V^T copy in 32-key
# blocks): three warpgroups of 192 x 96 fit 160 registers.  Correctness on
# every fp8 test case with the new configs (_dev/tests/tfp8: test_gpu_fp8
# built with tfp8.patch applied), then
# plan_bench against the fp8 default, separate processes, two rounds.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
( FA4_DB=/tmp/t8.db timeout 150 _dev/tests/tfp8 > $O/tfp8.log 2>&1; echo "exit $?" >> $O/tfp8.log )
echo "tfp8: $(grep -c '^ok' $O/tfp8.log) ok, $(grep -c '^not ok' $O/tfp8.log) not ok, $(tail -1 $O/tfp8.log)"; grep -A3 '^not ok' $O/tfp8.log | head -12
S="--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --dtype fp8"
CF=("--heuristic" "--config|sm90 bm=192 bn=96 stages=2 swizzle=32 wgs=3 regs=32/160 pingpong=1 rescale=8" "--config|sm90 bm=192 bn=96 stages=3 swizzle=32 wgs=3 regs=32/160 pingpong=1 rescale=8" "--config|sm90 bm=192 bn=96 stages=3 swizzle=32 wgs=3 regs=32/160 pingpong=0 rescale=8" "--config|sm90 bm=128 bn=192 stages=2 swizzle=32 wgs=2 regs=24/240 pingpong=0 rescale=8 sched=persistent fused_kv=1")
for r in 1 2; do for c in "${CF[@]}"; do for sh in "" "--causal"; do
  if [ "$c" = "--heuristic" ]; then t=$(FA4_DB=/tmp/pb.db build/bench/plan_bench $S $sh --rounds 7 --heuristic 2>&1 | grep '^source');
  else t=$(FA4_DB=/tmp/pb.db build/bench/plan_bench $S $sh --rounds 7 --config "${c#--config|}" 2>&1 | grep '^source\|rror' | head -1); fi
  echo "r$r [$sh] $(echo "$t" | grep -o 'ms=[0-9.]*') ${c#--config|} $(echo "$t" | grep -o 'rror.*' | cut -c1-120)"
done; done; done
