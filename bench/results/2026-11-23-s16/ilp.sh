#!/bin/bash
# Row max (and row sum) with independent chains: kernel trees _dev/kA (HEAD),
# kB (max over 4 chains + tree), kC (kB + the sum over 4 partial sums),
# each the seed's config of the row, alternating in separate processes, two
# rounds; then exp2_emu percentages (with late_k) in one process per row.
# Correctness first: the forward grid on kC.  Carries: _dev as build.
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB= FA4_FAMILIES=sm90
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
( FA4_DB=/tmp/t.db FA4_KERNEL_DIR=$PWD/_dev/kC FA4_TEST_ONLY=grid timeout ${LIMIT:-150} build/tests/test_gpu_forward > $O/grid-kC.log 2>&1; echo "exit $?" >> $O/grid-kC.log )
echo "grid kC: $(grep -c '^ok' $O/grid-kC.log) ok, $(grep -c '^not ok' $O/grid-kC.log) not ok, $(tail -1 $O/grid-kC.log)"; grep '^not ok' $O/grid-kC.log | head -5
R="stages=2 swizzle=128 q_tiles=1 warps=0 cluster=1 rescale=8"
W2="wgs=2 regs=24/240 bm=128"; W3="wgs=3 regs=32/160 bm=192"
# batch:seqlen:hq:hkv:d:causal:extra|config
CASES=(
"1:16384:32:32:64:0:|sm90 $W3 bn=128 $R exp2_emu=0 fused_kv=0 pingpong=1 sched=plain splits=0 late_k=1"
"1:16384:32:32:64:1:|sm90 $W3 bn=128 $R exp2_emu=0 fused_kv=0 pingpong=1 sched=plain splits=1 late_k=1"
"2:8192:32:32:64:0:|sm90 $W3 bn=128 $R exp2_emu=0 fused_kv=0 pingpong=1 sched=plain splits=0 late_k=0"
"1:16384:16:16:128:1:|sm90 $W2 bn=176 $R exp2_emu=0 fused_kv=0 pingpong=1 sched=plain splits=1 late_k=1"
"1:16384:16:16:128:0:|sm90 $W3 bn=80 ${R/stages=2/stages=3} exp2_emu=0 fused_kv=0 pingpong=0 sched=plain splits=0 late_k=0"
"1:16384:32:8:128:1:|sm90 $W2 bn=128 $R exp2_emu=0 fused_kv=1 pingpong=1 sched=dynamic splits=1 late_k=1 pack_gqa=1"
"1:16384:16:16:128:0:--dtype fp8|sm90 $W2 bn=192 ${R/swizzle=128/swizzle=64} exp2_emu=0 fused_kv=1 pingpong=1 sched=plain splits=1 late_k=0"
)
args() { IFS=: read -r b sq hq hkv d cz ex <<< "$1"; ca=""; [ "$cz" = 1 ] && ca="--causal"
  echo "--batch $b --seqlen-q $sq --heads-q $hq --heads-kv $hkv --head-dim $d $ca $ex"; }
for r in 1 2; do for c in "${CASES[@]}"; do
  s=${c%%|*}; cfg=${c#*|}
  for k in kA kB kC; do
    t=$(FA4_DB=/tmp/$k.db FA4_KERNEL_DIR=$PWD/_dev/$k timeout 90 build/bench/plan_bench $(args "$s") --config "$cfg" 2>&1 | tail -1)
    echo "r$r $s $k $t" | sed 's/config=.*//'
  done
done; done | tee $O/ilp.txt
# exp2 on the FMA pipe: percentages in one process (alternating rounds), kC tree.
EMU=(
"1:16384:32:32:64:0:|sm90 $W3 bn=128 $R fused_kv=0 pingpong=1 sched=plain splits=0 late_k=1"
"1:16384:32:32:64:1:|sm90 $W3 bn=128 $R fused_kv=0 pingpong=1 sched=plain splits=1 late_k=1"
"1:16384:16:16:128:0:--dtype fp8|sm90 $W2 bn=192 ${R/swizzle=128/swizzle=64} fused_kv=1 pingpong=1 sched=plain splits=1 late_k=0"
"1:16384:16:16:128:0:--softcap 30|sm90 $W3 bn=80 ${R/stages=2/stages=3} fused_kv=0 pingpong=0 sched=plain splits=0 late_k=0"
)
for r in 1 2; do for c in "${EMU[@]}"; do
  s=${c%%|*}; cfg=${c#*|}
  echo "== r$r $s"
  FA4_DB=/tmp/kC.db FA4_KERNEL_DIR=$PWD/_dev/kC timeout 150 build/bench/plan_bench $(args "$s") \
    --config "$cfg exp2_emu=0" --config "$cfg exp2_emu=8" --config "$cfg exp2_emu=14" --config "$cfg exp2_emu=25" 2>&1 | grep "^source" | sed 's/config=.*//'
done; done | tee $O/emu.txt
