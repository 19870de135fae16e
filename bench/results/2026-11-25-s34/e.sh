#!/bin/bash
# Softcap's tanh share on the serving paths across processes (the
# thirty-third session left the paged chunk's 50% unconfirmed): each shape's
# default alone in one process, the same config with tanh_poly=50 alone in
# the next (FA4_NO_DEFAULT), three rounds, cap 50, d128, pages of 64.
ln -sfn _dev build
export FA4_SYSTEM_DB= FA4_SOFTCAP=50
for r in ${ROUNDS:-1 2 3}; do
  for s in "chunk b8 q512 32/8 kv8k page64" "chunk varlen b8 q512 kv8k page64" \
           "prefill varlen b4 q4k 32/8 page64 nc" "prefill varlen b4 q4k 32/8 page64"; do
    line=$(_dev/bench/serving "$s" | tail -n +2 | head -1)
    cfg=$(echo "$line" | grep -o "sm[0-9]* bm=.*" | sed "s/ tanh_poly=[-0-9]*//")
    echo "r$r default $(echo "$line" | cut -c1-56)"
    FA4_NO_DEFAULT=1 FA4_CONFIGS="$cfg tanh_poly=50" _dev/bench/serving "$s" | tail -n +2 | head -1 | cut -c1-56 | sed "s/^/r$r share50 /"
  done
done
echo "config: $cfg"
