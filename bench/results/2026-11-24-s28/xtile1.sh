#!/bin/bash
# Tiles run as one loop (FA4_XTILE): correctness of the two-Q-slot and xtile
# sections of test_gpu_forward, then plan_bench with FA4_XTILE_OFF=1 (the
# previous consumer loop, same binary) against the new loop, processes
# alternating, three rounds: d128 non-causal 512-2k (the seed's 2-warpgroup
# persistent rows) and d64 non-causal 512 at 128x128 (two warpgroups).
ln -sfn _dev build
export FA4_SYSTEM_DB=
out=${OUT:-/tmp}; mkdir -p $out/x
FA4_TEST_ONLY="qslots xtile" timeout 200 _dev/tests/test_gpu_forward > $out/x/tests.txt 2>&1
echo "tests rc=$? ok=$(grep -c '^ok' $out/x/tests.txt) notok=$(grep -c '^not ok' $out/x/tests.txt)"; grep '^not ok' $out/x/tests.txt | head
d64="sm90 bm=128 bn=128 stages=3 swizzle=128 fused_kv=1 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 pingpong=1 sched=persistent splits=1 pack_gqa=0 kv_split_warps=0 late_k=1"
d64d="sm90 bm=128 bn=128 stages=3 swizzle=128 fused_kv=1 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 pingpong=1 sched=dynamic splits=1 pack_gqa=0 kv_split_warps=0 late_k=1"
for r in 1 2 3; do for mode in off on; do
  for shape in "32 512 16 128" "16 1024 16 128" "8 2048 16 128" "32 512 32 64"; do
    set -- $shape
    if [ $4 = 64 ]; then src=(--config "$d64" --config "$d64d"); else src=(--db _dev/rh.db); fi
    if [ $mode = off ]; then export FA4_XTILE_OFF=1; else unset FA4_XTILE_OFF; fi
    _dev/bench/plan_bench --batch $1 --seqlen-q $2 --heads-q $3 --head-dim $4 --rounds 9 --reps 10 "${src[@]}" > /tmp/pb.txt 2>&1
    echo "r$r $mode d$4 $2: $(grep '^source' /tmp/pb.txt | sed 's/.*ms=\([0-9.]*\).*/\1/' | tr '\n' ' ') $(grep -v '^source\|^#' /tmp/pb.txt | head -2)"
  done
done; done
