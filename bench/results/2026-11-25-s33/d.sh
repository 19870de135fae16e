#!/bin/bash
# The new softcap defaults (sm90_tanh_poly_default) against HEAD's: HEAD's
# kernels (FA4_KERNEL_DIR) under HEAD's default config, this tree's
# heuristic; processes alternating, two rounds; then the correctness runs.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
pb() { _dev/bench/plan_bench "$@" --rounds 9 --reps 10 2>&1 | grep -E '^source|rror' | sed 's/ from=.*//; s/source=[^ ]* //'; }
T="stages=2 swizzle=128 fused_kv=0 q_tiles=1 warps=0 cluster=1 rescale=8 pingpong=1"
S16="--batch 1 --seqlen-q 16384"; S4="--batch 4 --seqlen-q 4096"
declare -a name prob old
add() { name+=("$1"); prob+=("$2"); old+=("$3"); }
add "d64 16k"          "$S16 --heads-q 32 --head-dim 64"          "sm90 bm=192 bn=128 wgs=3 regs=32/160 $T exp2_emu=25 sched=plain splits=0 late_k=1 tanh_poly=50"
add "d64 causal 16k"   "$S16 --heads-q 32 --head-dim 64 --causal" "sm90 bm=192 bn=128 wgs=3 regs=32/160 $T exp2_emu=25 sched=plain splits=1 late_k=1 tanh_poly=50"
add "d128 16k"         "$S16 --heads-q 16 --head-dim 128"         "sm90 bm=192 bn=80 stages=3 swizzle=128 wgs=3 regs=32/160 rescale=8 pingpong=1 sched=plain splits=0 late_k=1 tanh_poly=0"
add "d128 causal 16k"  "$S16 --heads-q 16 --head-dim 128 --causal" "sm90 bm=128 bn=176 wgs=2 regs=24/240 $T sched=plain splits=1 late_k=1 tanh_poly=0"
add "fp8 d64 16k"      "$S16 --heads-q 32 --head-dim 64 --dtype fp8" "sm90 bm=192 bn=128 stages=2 swizzle=64 wgs=3 regs=32/160 rescale=8 pingpong=1 sched=persistent splits=1 tanh_poly=50"
add "fp8 d128 16k"     "$S16 --heads-q 16 --head-dim 128 --dtype fp8" "sm90 bm=192 bn=96 stages=4 swizzle=32 wgs=3 regs=32/160 rescale=8 pingpong=0 sched=plain splits=1 tanh_poly=50"
add "d64 4x4k"         "$S4 --heads-q 32 --head-dim 64"           "sm90 bm=192 bn=128 wgs=3 regs=32/160 $T exp2_emu=25 sched=plain splits=0 late_k=1 tanh_poly=50"
add "d128 4x4k"        "$S4 --heads-q 16 --head-dim 128"          "sm90 bm=128 bn=176 wgs=2 regs=24/240 $T sched=plain splits=0 late_k=1 tanh_poly=0"
add "d128 causal 4x4k" "$S4 --heads-q 16 --head-dim 128 --causal" "sm90 bm=128 bn=128 stages=2 swizzle=128 fused_kv=1 wgs=2 regs=24/240 rescale=8 pingpong=0 sched=dynamic splits=1 late_k=1 tanh_poly=0"
for r in 1 2; do
  for i in "${!name[@]}"; do
    echo "r$r ${name[$i]} cap30 HEAD: $(FA4_KERNEL_DIR=_dev/headk/kernels pb ${prob[$i]} --softcap 30 --config "${old[$i]}")"
    echo "r$r ${name[$i]} cap30 new:  $(pb ${prob[$i]} --softcap 30 --heuristic)"
  done
done
for i in 1 4 5 6 7 8; do echo "${name[$i]} plain: $(pb ${prob[$i]} --heuristic)"; done
FA4_TEST_ONLY=softcap timeout 200 _dev/tests/test_gpu_forward > $O/fwd-softcap.txt 2>&1
echo "softcap rc=$? $(grep -c '^ok' $O/fwd-softcap.txt) ok, $(grep -c '^not ok' $O/fwd-softcap.txt) not ok, $(grep -c 'tanh_poly=100' $O/fwd-softcap.txt) on tanh_poly=100"
grep -A3 '^not ok' $O/fwd-softcap.txt | head -20
PYTHONPATH=$PWD/python FA4_LIBRARY=$PWD/_dev/.libs/libfa4.so timeout 100 python3 python/tests/run.py -k softcap --tap python/tests/test_gpu.py > $O/py-softcap.txt 2>&1
echo "python softcap rc=$? $(grep -c 'ok' $O/py-softcap.txt) lines with ok, $(grep -c 'not ok' $O/py-softcap.txt) not ok"
grep -A3 'not ok' $O/py-softcap.txt | head
