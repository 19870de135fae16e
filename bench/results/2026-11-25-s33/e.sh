#!/bin/bash
# (1) d128 causal on the 128 x 176 tile (8k, 16k, GQA 32/8 16k): the new
# default's 50% share against HEAD's default, processes alternating, two
# rounds; (2) fa4-tune over d64 4 x 4k cap 30 (16 trials), its winner
# through the public API in a fresh process beside the heuristic; (3) the
# forward test's softcap section with this rule.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
pb() { _dev/bench/plan_bench "$@" --rounds 9 --reps 10 2>&1 | grep -E '^source|rror' | sed 's/ from=.*//; s/source=[^ ]* //'; }
H="sm90 bm=128 bn=176 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=plain splits=1 late_k=1"
for r in 1 2; do
  for s in "--batch 2 --seqlen-q 8192 --heads-q 16" "--batch 1 --seqlen-q 16384 --heads-q 16" "--batch 1 --seqlen-q 16384 --heads-q 32 --heads-kv 8"; do
    pk=""; case "$s" in *heads-kv*) pk=" pack_gqa=1";; esac
    echo "r$r d128 causal $s cap30 HEAD: $(FA4_KERNEL_DIR=_dev/headk/kernels pb $s --head-dim 128 --causal --softcap 30 --config "$H$pk tanh_poly=0")"
    echo "r$r d128 causal $s cap30 new:  $(pb $s --head-dim 128 --causal --softcap 30 --heuristic)"
  done
done
for s in "--batch 2 --seqlen-q 8192 --heads-q 16" "--batch 1 --seqlen-q 16384 --heads-q 32 --heads-kv 8"; do
  echo "d128 causal $s plain: $(pb $s --head-dim 128 --causal --heuristic)"; done
rm -f $O/tune.db
timeout 200 _dev/fa4-tune tune --batch 4 --seqlen-q 4096 --heads-q 32 --head-dim 64 --softcap 30 --max-trials 16 --time-budget 150 --db $O/tune.db > $O/tune.txt 2>&1
echo "tune rc=$?"; grep -E "winner|default|in use|stored|faster|confirm" $O/tune.txt | head -12
_dev/bench/plan_bench --batch 4 --seqlen-q 4096 --heads-q 32 --head-dim 64 --softcap 30 --heuristic --db $O/tune.db --rounds 9 --reps 10 2>&1 | grep -E '^source|rror'
FA4_TEST_ONLY=softcap timeout 200 _dev/tests/test_gpu_forward > $O/fwd-softcap.txt 2>&1
echo "softcap rc=$? $(grep -c '^ok' $O/fwd-softcap.txt) ok, $(grep -c '^not ok' $O/fwd-softcap.txt) not ok"
grep -A3 '^not ok' $O/fwd-softcap.txt | head -20
