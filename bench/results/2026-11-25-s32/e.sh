#!/bin/bash
# The V^T copy of d.sh: (1) test_gpu_fp8_serving's shapes d.sh's run did not
# reach (paged 256 / 32 d64 / 16 d256, decode steps, varlen queries over
# pages, varlen d256); (2) a second round of HEAD against it, with the
# 4k causal and 16k rows; (3) bf16 defaults of the short rows for ratios.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
FA4_TEST_SHAPES="paged 256,paged 32 d64,paged 16 d256,decode step,varlen queries,varlen d256" \
    timeout 220 _dev/tests/test_gpu_fp8_serving > $O/fp8-serving2.txt 2>&1
echo "fp8 serving (rest) rc=$? $(grep -c '^ok' $O/fp8-serving2.txt) ok, $(grep -c '^not ok' $O/fp8-serving2.txt) not ok"
grep '^not ok' $O/fp8-serving2.txt | head
grep -o '^ok [0-9]* - fp8 [a-z]* [^\[]*' $O/fp8-serving2.txt | sed 's/^ok [0-9]* - //' | sort | uniq -c
run() { _dev/bench/$1 --batch $2 --seqlen-q $3 --heads-q $4 --head-dim $5 $6 --heuristic --rounds 9 --reps 10 2>&1 \
        | grep '^source' | sed 's/.* ms=\([0-9.]*\) min=\([0-9.]*\) max=\([0-9.]*\).*/\1 [\2-\3]/'; }
for row in "16 1024 16 128 1" "16 1024 16 128 0" "8 2048 16 128 1" "8 2048 32 64 0" "4 4096 16 128 1" "1 16384 16 128 1" "16 1024 16 256 0"; do set -- $row
  c=; [ $5 = 1 ] && c=--causal
  for k in plan_bench_old plan_bench; do
    echo "r2 fp8 b$1 s$2 h$3 d$4 causal=$5 $k: $(run $k $1 $2 $3 $4 "$c --dtype fp8")"
  done
  case "$row" in "4 4096"*|"1 16384"*) ;; *) echo "r2 bf16 b$1 s$2 h$3 d$4 causal=$5: $(run plan_bench $1 $2 $3 $4 "$c")";; esac
done
