#!/bin/bash
# Does the max-free loop lose fp8's gain to the later K release?  HEAD's
# kernels (_dev/knew: K freed after the row sums, which the recompute
# needs) against _dev/kexp (K freed right after S, as the max-first loop
# does; a measurement only: the rare recompute would read a reused stage),
# same config, separate processes alternating, two rounds.  Then the four
# GPU test programs at once (correctness only, no timing).  Carries: _dev.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
S16="--batch 1 --seqlen-q 16384"
FP8="sm90 bm=128 bn=192 stages=3 swizzle=64 fused_kv=0 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 pingpong=1 sched=plain splits=0 pack_gqa=0 kv_split_warps=0 late_k=0"
D64="sm90 bm=192 bn=128 stages=2 swizzle=128 fused_kv=0 q_tiles=1 warps=0 wgs=3 regs=32/160 cluster=1 exp2_emu=0 rescale=8 pingpong=1 sched=plain splits=0 pack_gqa=0 kv_split_warps=0 late_k=0"
CAU="sm90 bm=128 bn=176 stages=2 swizzle=128 fused_kv=0 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 pingpong=1 sched=plain splits=1 pack_gqa=0 kv_split_warps=0 late_k=0"
run() { # name tree shape... source...
  local name=$1 k=$2; shift 2
  t=$(FA4_DB=/tmp/$k.db FA4_KERNEL_DIR=$PWD/_dev/$k timeout 60 build/bench/plan_bench $S16 "$@" 2>&1 | grep '^source' | tail -1)
  echo "r$r $name $k $(echo "$t" | grep -o 'ms=[0-9.]*') $(echo "$t" | grep -o ' bm=[0-9]* bn=[0-9]* stages=[0-9]*' | head -1) $(echo "$t" | grep -o 'late_k=[01]' | head -1)"
}
for r in 1 2; do
  for k in knew kexp; do run fp8-default $k --heads-q 16 --head-dim 128 --dtype fp8 --heuristic; done
  for k in knew kexp; do run fp8-s3 $k --heads-q 16 --head-dim 128 --dtype fp8 --config "$FP8"; done
  for k in knew kexp; do run d128-default $k --heads-q 16 --head-dim 128 --heuristic; done
  run d64-default-latek knew --heads-q 32 --head-dim 64 --heuristic
  for k in knew kexp; do run d64-latek0 $k --heads-q 32 --head-dim 64 --config "$D64"; done
  run causal-default-latek knew --heads-q 16 --head-dim 128 --causal --heuristic
  for k in knew kexp; do run causal-latek0 $k --heads-q 16 --head-dim 128 --causal --config "$CAU"; done
done 2>&1 | tee $O/kfree.txt
for t in forward serving fp8 fp8_serving; do
  ( FA4_DB=/tmp/t-$t.db timeout 400 build/tests/test_gpu_$t > $O/$t.log 2>&1; echo "exit $?" >> $O/$t.log ) &
done
wait
for t in forward serving fp8 fp8_serving; do
  echo "$t: $(grep -c '^ok' $O/$t.log) ok, $(grep -c '^not ok' $O/$t.log) not ok, $(tail -1 $O/$t.log) $(grep '^1\.\.' $O/$t.log)"; grep -A3 '^not ok' $O/$t.log | head -12
done
