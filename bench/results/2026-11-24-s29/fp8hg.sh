#!/bin/bash
# fp8 causal tiles in groups of heads (experiment build: XFP8HG=1 lets
# sm90_head_group take fp8).  (1) test_gpu_forward's hgroup section with two
# fp8 cases (2-WG 128x128 and 3-WG 192x64), grouped.  (2) fp8 d128 causal,
# 16k tokens at 4k/8k/16k: the default (192x96, ungrouped: grouped it
# spills) and three tiles that compile grouped without spills, each
# ungrouped and grouped, processes alternating, two rounds; bf16's default
# for the ratio.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
XFP8HG=1 FA4_TEST_ONLY=hgroup timeout 200 _dev/tests/test_gpu_forward > $O/fp8hg-tests.txt 2>&1
echo "hgroup tests (fp8 grouped) rc=$? $(grep -c '^ok' $O/fp8hg-tests.txt) ok, $(grep -c '^not ok' $O/fp8hg-tests.txt) not ok"
grep '^not ok' $O/fp8hg-tests.txt | head
t="q_tiles=1 warps=0 cluster=1 exp2_emu=0 rescale=8 splits=1 pack_gqa=0 kv_split_warps=0 late_k=0 sched=plain"
cfgs=("sm90 bm=192 bn=64 stages=4 swizzle=64 fused_kv=0 wgs=3 regs=32/160 pingpong=0 $t"
      "sm90 bm=128 bn=128 stages=4 swizzle=128 fused_kv=0 wgs=2 regs=24/240 pingpong=1 $t"
      "sm90 bm=128 bn=192 stages=3 swizzle=64 fused_kv=0 wgs=2 regs=24/240 pingpong=0 $t")
args=(--heuristic); for c in "${cfgs[@]}"; do args+=(--config "$c"); done
for r in 1 2; do
  for shape in "1 16384" "2 8192" "4 4096"; do set -- $shape
    for mode in off on; do
      if [ $mode = on ]; then export XFP8HG=1; else unset XFP8HG; fi
      _dev/bench/plan_bench --batch $1 --seqlen-q $2 --heads-q 16 --head-dim 128 --causal --dtype fp8 \
          --rounds 7 --reps 10 "${args[@]}" > /tmp/pb.txt 2>/tmp/pb.err
      echo "r$r fp8 c $2 grouped=$mode: $(grep '^source' /tmp/pb.txt | sed 's/source=\([^ ]*\) ms=\([0-9.]*\).*/\1=\2/' | tr '\n' ' ') $(head -c 150 /tmp/pb.err)"
    done
    unset XFP8HG
    _dev/bench/plan_bench --batch $1 --seqlen-q $2 --heads-q 16 --head-dim 128 --causal --db _dev/rh.db \
        --rounds 7 --reps 10 > /tmp/pb.txt 2>&1
    echo "r$r bf16 c $2 seed: $(grep '^source' /tmp/pb.txt | sed 's/.*ms=\([0-9.]*\).*/\1/')"
  done
done
