#!/bin/bash
# The new fp8 default (three warpgroups of 192 x 96, 32 B swizzle, 4 stages)
# on the H100: the fp8 GPU tests on this build, then the old default (its
# config text) against the new heuristic through the public API, one process
# per shape alternating (9 rounds), and fp8 against bf16 (each default), two rounds.
ln -sfn _dev build
O=${OUT:-/tmp}/f8new; mkdir -p $O; export FA4_SYSTEM_DB=
T0=$(date +%s)
( FA4_DB=/tmp/n1.db timeout 150 build/tests/test_gpu_fp8 > $O/fp8.log 2>&1; echo "exit $?" >> $O/fp8.log ) &
wait
for f in fp8; do echo "$f: $(grep -c '^ok' $O/$f.log) ok, $(grep -c '^not ok' $O/$f.log) not ok, $(tail -1 $O/$f.log)"; grep -A3 '^not ok' $O/$f.log | head -8; done
echo "checked $(( $(date +%s) - T0 )) s"
export FA4_DB=/tmp/n3.db
PB=build/bench/plan_bench
OLDNC="sm90 bm=128 bn=192 stages=2 swizzle=64 fused_kv=1 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 pingpong=0 sched=persistent splits=1 pack_gqa=0 kv_split_warps=0 late_k=0"
OLDC="sm90 bm=128 bn=192 stages=2 swizzle=64 fused_kv=0 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 pingpong=1 sched=plain splits=1 pack_gqa=0 kv_split_warps=0 late_k=0"
S="--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --dtype fp8"
rows=("d128|$S|$OLDNC" "d128 causal|$S --causal|$OLDC" "d128 4x4k|$S --batch 4 --seqlen-q 4096|$OLDNC"
      "d96|--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 96 --dtype fp8|$OLDNC")
for row in "${rows[@]}"; do IFS='|' read -r n s c <<< "$row"; $PB $s --rounds 1 --reps 1 --config "$c" --heuristic > /dev/null 2>&1 & done; wait
for row in "${rows[@]}"; do IFS='|' read -r n s c <<< "$row"
  for r in 1; do echo "== $n run $r"; $PB $s --rounds 9 --config "$c" --heuristic 2>&1 | grep '^source\|gain' | sed 's/config=\[.*\]//; s/source=sm90 bm=128.*late_k=0/old default/'; done
done
B="--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128"
$PB $B --rounds 1 --reps 1 --heuristic > /dev/null 2>&1; $PB $B --causal --rounds 1 --reps 1 --heuristic > /dev/null 2>&1
for r in 1 2; do
  for row in "fp8|--dtype fp8" "bf16|" "fp8 causal|--dtype fp8 --causal" "bf16 causal|--causal"; do
    IFS='|' read -r n o <<< "$row"
    echo "r$r $n $($PB $B $o --rounds 7 --heuristic 2>&1 | grep '^source' | sed 's/ from=.*//')"
  done
done
echo "total $(( $(date +%s) - T0 )) s"
