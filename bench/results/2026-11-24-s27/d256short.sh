#!/bin/bash
# d256 short rows (issue 11): the plain grid the seed uses against the
# persistent, longest-first and dynamic schedulers at bn 64 (an experiment
# build, plan_bench_noest, whose budget skips the register estimate when
# FA4_NOEST is set: these variants compile to 168 registers without spills
# under NVRTC 13.0, the estimate says 252 > 240). One process per shape,
# every config interleaved (plan_bench's rotated rounds), two processes.
# Then the sm80 family's d256 non-causal 512 row: the tuner over its 22
# configs, and compare.py against FA2 with the heuristic and the tuned row.
ln -sfn _dev build
export FA4_SYSTEM_DB=
out=${OUT:-/tmp}; mkdir -p $out/d256
pb=_dev/bench/plan_bench_noest
base="swizzle=128 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 pingpong=1 pack_gqa=0 kv_split_warps=0 late_k=1"
for shape in "32 512" "16 1024"; do
  set -- $shape; b=$1; s=$2
  for causal in "" "--causal"; do
    name=d256-$s${causal:+-c}
    if [ -z "$causal" ]; then
      if [ $s = 512 ]; then seed="sm90 bm=128 bn=64 stages=3 fused_kv=1 sched=plain splits=0 $base"
      else seed="sm90 bm=128 bn=80 stages=2 fused_kv=0 sched=plain splits=0 $base"; fi
    else
      seed="sm90 bm=128 bn=64 stages=2 fused_kv=1 sched=plain splits=1 $base"
    fi
    cfgs=("$seed"
      "sm90 bm=128 bn=64 stages=2 fused_kv=1 sched=persistent splits=1 $base"
      "sm90 bm=128 bn=64 stages=3 fused_kv=1 sched=persistent splits=1 $base"
      "sm90 bm=128 bn=64 stages=2 fused_kv=0 sched=persistent splits=1 $base"
      "sm90 bm=128 bn=64 stages=2 fused_kv=1 sched=dynamic splits=1 $base"
      "sm90 bm=128 bn=64 stages=3 fused_kv=1 sched=dynamic splits=1 $base"
      "sm90 bm=128 bn=64 stages=2 fused_kv=1 sched=lpt splits=1 $base")
    args=(); for c in "${cfgs[@]}"; do args+=(--config "$c"); done
    for run in 1 2; do
      FA4_NOEST=1 FA4_DB=/tmp/d256.db $pb --batch $b --seqlen-q $s --heads-q 8 --head-dim 256 $causal \
        --rounds 15 --reps 10 "${args[@]}" > $out/d256/$name-run$run.txt 2>&1
      echo "== $name run $run"; grep '^source' $out/d256/$name-run$run.txt | sed 's/ from=.*config=\[sm90 bm=128 / [/; s/ q_tiles.*//'
    done
  done
done

echo "== sm80 d256 non-causal 512: tuner"
FA4_FAMILIES=sm80 _dev/fa4-tune tune --batch 32 --seqlen-q 512 --heads-q 8 --head-dim 256 \
  --strategy exhaustive --db /tmp/s80.db > $out/d256/sm80-tune.txt 2>&1
tail -15 $out/d256/sm80-tune.txt
echo "== sm80 compare (heuristic, then tuned)"
for run in 1 2; do
  FA4_FAMILIES=sm80 python3 bench/compare.py --lib _dev/.libs/libfa4.so --dims "" --row 32:512:8/8:256:0 \
    --no-fa4-cute --no-flashinfer --gemm 0 > $out/d256/sm80-cmp-heur$run.txt 2>&1
  FA4_FAMILIES=sm80 python3 bench/compare.py --lib _dev/.libs/libfa4.so --db /tmp/s80.db --dims "" --row 32:512:8/8:256:0 \
    --no-fa4-cute --no-flashinfer --gemm 0 > $out/d256/sm80-cmp-tuned$run.txt 2>&1
  grep "^256" $out/d256/sm80-cmp-heur$run.txt $out/d256/sm80-cmp-tuned$run.txt | cut -c1-200
done
