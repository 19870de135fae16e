#!/bin/bash
# GPU correctness of one kernel tree ($1, e.g. _exp/kE) against the CPU
# reference: test_gpu_forward's sections, the serving and fp8 serving tests,
# in parallel (NVRTC-bound), each with its own database.  Logs to $OUT.
tree=$(pwd)/$1; tag=${1##*/}
export FA4_FAMILIES=sm90 FA4_KERNEL_DIR=$tree FA4_SYSTEM_DB=
run() { name=$1; shift; ( FA4_DB=/tmp/c-$tag-$name.db timeout ${LIMIT:-300} "$@" > $OUT/$tag-$name.log 2>&1; echo "exit $?" >> $OUT/$tag-$name.log ) & }
FA4_TEST_ONLY=grid run grid build/tests/test_gpu_forward
FA4_TEST_ONLY=tail,softcap,dynamic,window,exp2 run rest build/tests/test_gpu_forward
run serving build/tests/test_gpu_serving
run fp8 build/tests/test_gpu_fp8_serving
wait
for f in $OUT/$tag-*.log; do echo "$f: $(grep -c '^ok' $f) ok, $(grep -c '^not ok' $f) not ok, $(tail -1 $f)"; grep '^not ok' $f | head -5; done
