#!/bin/bash
# The new serving default (causal d65-128 chunks over a paged cache under
# the constant max take a 50% tanh share): test_gpu_serving's softcap shapes
# (a new paged 64 chunk among them) and the paged 16 chunk; then the paged
# chunk's default against the same config at tanh_poly=0, each alone in
# its process, cap 50, three rounds.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
FA4_TEST_SHAPES="softcap sinks,paged 16 chunked prefill d128" timeout 200 _dev/tests/test_gpu_serving > $O/serving.txt 2>&1
echo "serving rc=$? $(grep -c '^ok' $O/serving.txt) ok, $(grep -c '^not ok' $O/serving.txt) not ok, $(grep -c '^ok.*skip\|# SKIP' $O/serving.txt) skipped"
grep -A2 '^not ok' $O/serving.txt | head; grep 'paged 64 chunked prefill d128 softcap' $O/serving.txt | head -3 | cut -c1-250
export FA4_SOFTCAP=50
s="chunk b8 q512 32/8 kv8k page64"
for r in 1 2 3; do
  line=$(_dev/bench/serving "$s" | tail -n +2 | head -1)
  cfg=$(echo "$line" | grep -o "sm[0-9]* bm=.*" | sed "s/ tanh_poly=[-0-9]*//")
  echo "r$r default $(echo "$line" | cut -c1-56) $(echo "$line" | grep -o 'tanh_poly=[0-9]*')"
  FA4_NO_DEFAULT=1 FA4_CONFIGS="$cfg tanh_poly=0" _dev/bench/serving "$s" | tail -n +2 | head -1 | cut -c1-56 | sed "s/^/r$r share0  /"
done
