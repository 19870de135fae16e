#!/bin/bash
# The tail split: its GPU cases (test_gpu_forward's tail section), then
# plan_bench, same binary and process per shape: the config without the
# split (splits=1) against the same with it (splits=0), and the heuristic
# where it differs; 5 rounds, two runs.  Carries: build.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s11.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
FA4_TEST_ONLY=tail timeout 150 build/tests/test_gpu_forward > $O/tail-tests.txt 2>&1
echo "tail tests rc=$?: $(grep -c '^ok' $O/tail-tests.txt) ok, $(grep -c '^not ok' $O/tail-tests.txt) not ok"
grep 'tail split' $O/tail-tests.txt | cut -c1-190
B=build/bench/plan_bench
C3="sm90 bm=192 bn=80 stages=3 swizzle=128 wgs=3 regs=32/160 pingpong=0 sched=plain"
C64="sm90 bm=192 bn=128 stages=2 swizzle=128 wgs=3 regs=32/160 pingpong=1 sched=plain"
C2="sm90 bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 pingpong=1 sched=plain"
CF="sm90 bm=128 bn=192 stages=2 swizzle=64 fused_kv=1 wgs=2 regs=24/240 pingpong=1 sched=plain"
run() { # label shape config
  echo "== $1"; $B --rounds 5 $2 --config "$3" --config "$3 splits=0" ${4:+--heuristic} 2>&1 | grep '^source=' | sed 's/config=.*//' | sed 's/^/   /'
}
for r in 1 2; do
run "d128 16k h16 (1376 tiles: 56 in 2)" "--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128" "$C3"
run "d128 8k b2 h16 (1376 tiles)" "--batch 2 --seqlen-q 8192 --heads-q 16 --head-dim 128" "$C3"
run "fp8 d128 16k h16 (2048 tiles: 68 in 3)" "--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --dtype fp8" "$CF"
run "d64 4k b4 h32 (2816 tiles: 44 in 3)" "--batch 4 --seqlen-q 4096 --heads-q 32 --head-dim 64" "$C64" h
run "d128 2k b8 h16 (2048 tiles: 68 in 3)" "--batch 8 --seqlen-q 2048 --heads-q 16 --head-dim 128" "$C2" h
run "d128 4k b1 h8 (176 tiles: 44 in 3)" "--batch 1 --seqlen-q 4096 --heads-q 8 --head-dim 128" "$C3" h
run "GQA 32/8 d128 4k b4 (1408 tiles at 192 rows: 88)" "--batch 4 --seqlen-q 4096 --heads-q 32 --heads-kv 8 --head-dim 128" "$C3" h
done
