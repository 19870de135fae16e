#!/bin/bash
# Softcap with a constant max (FA4_SOFTCAP_FIXED_MAX, bf16, cap <= 52):
# correctness first (test_gpu_forward's softcap, tail and pack sections,
# test_gpu_serving), then plan_bench per config, the kernel trees
# _dev/kold (running max) and _dev/knew alternating in separate processes,
# two rounds; the plain problem's default for the cost.  Then the MUFU probe.
# Carries: _dev as build.
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB= FA4_FAMILIES=sm90
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
( FA4_DB=/tmp/t.db FA4_TEST_ONLY="softcap tail pack" timeout 200 build/tests/test_gpu_forward > $O/fwd.log 2>&1; echo "exit $?" >> $O/fwd.log )
echo "forward softcap/tail/pack: $(grep -c '^ok' $O/fwd.log) ok, $(grep -c '^not ok' $O/fwd.log) not ok, $(tail -1 $O/fwd.log)"; grep -A2 '^not ok' $O/fwd.log | head -12
( FA4_DB=/tmp/t2.db timeout 150 build/tests/test_gpu_serving > $O/serving.log 2>&1; echo "exit $?" >> $O/serving.log )
echo "serving: $(grep -c '^ok' $O/serving.log) ok, $(grep -c '^not ok' $O/serving.log) not ok, $(tail -1 $O/serving.log)"; grep -A2 '^not ok' $O/serving.log | head -8
R="swizzle=128 q_tiles=1 warps=0 cluster=1 rescale=8 exp2_emu=0 fused_kv=0"
W2="wgs=2 regs=24/240 bm=128"; W3="wgs=3 regs=32/160 bm=192"
# batch:seqlen:hq:d:causal|config
CASES=(
"1:16384:16:128:0|sm90 $W3 bn=80 stages=3 $R pingpong=0 sched=plain splits=0 late_k=0"
"1:16384:16:128:0|sm90 $W3 bn=80 stages=3 $R pingpong=1 sched=plain splits=0 late_k=0"
"1:16384:16:128:0|sm90 $W3 bn=80 stages=3 $R pingpong=1 sched=plain splits=0 late_k=1"
"1:16384:16:128:0|sm90 $W2 bn=176 stages=2 $R pingpong=1 sched=plain splits=0 late_k=0"
"1:16384:16:128:1|sm90 $W3 bn=80 stages=3 $R pingpong=0 sched=plain splits=1 late_k=0"
"1:16384:16:128:1|sm90 $W2 bn=176 stages=2 $R pingpong=1 sched=plain splits=1 late_k=1"
"1:16384:32:64:0|sm90 $W3 bn=128 stages=2 $R pingpong=1 sched=plain splits=0 late_k=1"
"1:16384:16:256:0|sm90 $W2 bn=80 stages=2 $R pingpong=1 sched=plain splits=0 late_k=0"
)
args() { IFS=: read -r b sq hq d cz <<< "$1"; ca=""; [ "$cz" = 1 ] && ca="--causal"
  echo "--batch $b --seqlen-q $sq --heads-q $hq --head-dim $d $ca"; }
for r in 1 2; do
  for s in "1:16384:16:128:0" "1:16384:16:128:1" "1:16384:32:64:0" "1:16384:16:256:0"; do
    t=$(FA4_DB=/tmp/p.db timeout 90 build/bench/plan_bench $(args "$s") --heuristic 2>&1 | grep "^source" | tail -1)
    echo "r$r $s plain $t" | sed 's/config=.*//'
    t=$(FA4_DB=/tmp/p.db FA4_KERNEL_DIR=$PWD/_dev/knew timeout 90 build/bench/plan_bench $(args "$s") --softcap 30 --heuristic 2>&1 | grep "^source" | tail -1)
    echo "r$r $s cap30-default-knew $t"
  done
  for c in "${CASES[@]}"; do
    s=${c%%|*}; cfg=${c#*|}
    for k in kold knew; do
      t=$(FA4_DB=/tmp/$k.db FA4_KERNEL_DIR=$PWD/_dev/$k timeout 90 build/bench/plan_bench $(args "$s") --softcap 30 --config "$cfg" 2>&1 | grep "^source" | tail -1)
      echo "r$r $s $k $t" | sed 's/config=.*//'
    done
    echo "   [$cfg]"
  done
done | tee $O/bench.txt
_dev/mufu/mufu | tee $O/mufu.txt
