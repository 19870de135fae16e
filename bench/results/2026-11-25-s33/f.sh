#!/bin/bash
# The committed tree on the GPU: test_gpu_forward's softcap and exp2
# sections, test_gpu_fp8, the Python softcap and fp8 tests; and the -1
# path: a d64 softcap config text without tanh_poly beside the heuristic
# (75%) and an explicit 0, in one process.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
for s in softcap exp2; do
  FA4_TEST_ONLY=$s timeout 200 _dev/tests/test_gpu_forward > $O/fwd-$s.txt 2>&1
  echo "forward $s rc=$? $(grep -c '^ok' $O/fwd-$s.txt) ok, $(grep -c '^not ok' $O/fwd-$s.txt) not ok"
  grep -A3 '^not ok' $O/fwd-$s.txt | head -8
done
timeout 180 _dev/tests/test_gpu_fp8 > $O/fp8.txt 2>&1
echo "fp8 rc=$? $(grep -c '^ok' $O/fp8.txt) ok, $(grep -c '^not ok' $O/fp8.txt) not ok"
grep -A3 '^not ok' $O/fp8.txt | head -8
for k in softcap fp8; do
  PYTHONPATH=$PWD/python FA4_LIBRARY=$PWD/_dev/.libs/libfa4.so timeout 120 python3 python/tests/run.py -k $k --tap python/tests/test_gpu.py > $O/py-$k.txt 2>&1
  echo "python $k rc=$? $(grep -c 'ok' $O/py-$k.txt) lines with ok, $(grep -c 'not ok' $O/py-$k.txt) not ok"
done
B="sm90 bm=192 bn=128 stages=2 swizzle=128 wgs=3 regs=32/160 rescale=8 pingpong=1 sched=plain splits=0 late_k=1"
_dev/bench/plan_bench --batch 1 --seqlen-q 16384 --heads-q 32 --head-dim 64 --softcap 30 --heuristic --config "$B" --config "$B tanh_poly=0" --rounds 9 --reps 10 2>&1 | grep -E '^source|rror' | sed 's/ from=.*//'
