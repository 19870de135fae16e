#!/bin/bash
# Feasibility of two CTAs per SM for short causal rows (experiment build
# _dev2: consumer_wgs 1 admitted, 64-row tiles, __launch_bounds__(256, 2),
# 24/232 registers, shared memory <= 113 KB, the plain grid): correctness
# of one shape first (plan_bench verifies against the CPU reference), then
# the seed's config against 64-row ones, separate processes alternating,
# two rounds.  Carries: _dev2.
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
PB="env LD_LIBRARY_PATH=$PWD/_dev2/.libs _dev2/bench/plan_bench"
ldd _dev2/bench/plan_bench | grep fa4
for c in 0 1; do
  FA4_DB=/tmp/sw.db SWEEP_ONLY="wgs=1" SWEEP_DTYPE=bf16 SWEEP_CAUSAL=$c LD_LIBRARY_PATH=$PWD/_dev2/.libs timeout 200 \
      _dev2/bench/sweep sm90 64,128 1,17,129,1000 > $O/sweep$c.txt 2>&1
  echo "sweep causal=$c rc=$?: $(tail -2 $O/sweep$c.txt)"
done
T="q_tiles=1 warps=0 wgs=1 regs=24/232 cluster=1 exp2_emu=0 rescale=8 pingpong=0 sched=plain splits=1 pack_gqa=0 kv_split_warps=0"
W1="sm90 bm=64 bn=128 stages=2 swizzle=128 fused_kv=1 $T late_k=1"
W2="sm90 bm=64 bn=128 stages=2 swizzle=128 fused_kv=0 $T late_k=1"
W3="sm90 bm=64 bn=64 stages=2 swizzle=128 fused_kv=1 $T late_k=1"
W4="sm90 bm=64 bn=128 stages=2 swizzle=128 fused_kv=1 $T late_k=0"
W5="sm90 bm=64 bn=96 stages=3 swizzle=128 fused_kv=0 $T late_k=1"
S512="sm90 bm=128 bn=128 stages=3 swizzle=128 fused_kv=1 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 pingpong=1 sched=dynamic splits=1 pack_gqa=0 kv_split_warps=0 late_k=1"
S1K="sm90 bm=128 bn=128 stages=3 swizzle=64 fused_kv=1 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 pingpong=0 sched=dynamic splits=1 pack_gqa=0 kv_split_warps=0 late_k=1"
run() { # label shape... config
  local lab=$1 cfg=$2; shift 2
  t=$(FA4_DB=/tmp/x.db timeout 60 $PB "$@" --config "$cfg" 2>&1)
  echo "$lab $(echo "$t" | grep '^source' | tail -1 | grep -o 'ms=[0-9.]*') $(echo "$t" | grep -io 'rel[_ a-z]*err[=: ]*[0-9.e+-]*' | head -1) $(echo "$t" | grep -i 'error\|refus\|fail' | head -1 | cut -c1-160)"
}
for r in 1 2; do
  for c in S512 W1 W2 W3 W4 W5; do run "r$r d64c512 $c" "${!c}" --batch 32 --seqlen-q 512 --heads-q 32 --head-dim 64 --causal; done
  for c in S1K W1 W2 W3 W4 W5; do run "r$r d64c1k $c" "${!c}" --batch 16 --seqlen-q 1024 --heads-q 32 --head-dim 64 --causal; done
done | tee $O/two_ctas.txt
