#!/bin/bash
# device run 3: sm80 tile experiments (d128 bn64 at 32 rows: estimate raised in _exp/plan_bench_exp; d256 bn64), full GPU tests
O=$OUT; export FA4_DB=/tmp/s7.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
for c in "" "--causal"; do
  for s in "--batch 1 --seqlen-q 16384" "--batch 16 --seqlen-q 1024"; do
    echo "=== sm80 d128 $s $c"
    FA4_FAMILIES=sm80 timeout 100 _exp/plan_bench_exp --rounds 5 $s --heads-q 16 --head-dim 128 $c --heuristic --config "sm80 bm=128 bn=64 stages=2 swizzle=128 warps=4" 2>&1 | grep '^source=' | sed 's/ config=.*vs_/ vs_/; s/ config=.*//'
    echo "=== sm80 d256 $s $c"
    FA4_FAMILIES=sm80 timeout 100 build/bench/plan_bench --rounds 5 $s --heads-q 8 --head-dim 256 $c --heuristic --config "sm80 bm=128 bn=64 stages=2 swizzle=128 warps=8" --config "sm80 bm=128 bn=64 stages=1 swizzle=128 warps=8" 2>&1 | grep '^source=' | sed 's/ config=.*vs_/ vs_/; s/ config=.*//'
  done
done
for t in test_gpu_forward test_gpu_fp8; do
  timeout 330 build/tests/$t > $O/$t.log 2>&1; echo "=== $t rc=$? ok=$(grep -c '^ok' $O/$t.log) not_ok=$(grep -c '^not ok' $O/$t.log) skip=$(grep -c '# SKIP' $O/$t.log)"; grep '^not ok' $O/$t.log | head -5
done
