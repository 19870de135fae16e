#!/bin/bash
# After the thread_row() tidy (d4a982f): the GPU tests it touches -- the
# forward sections with sinks, softcap and packing, the serving shapes
# (varlen sinks, packed sm90 configs) and fp8 serving -- on this build.
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
run() { name=$1; shift; ( FA4_DB=/tmp/c-$name.db timeout ${LIMIT:-330} "$@" > $O/gpu-$name.log 2>&1; echo "exit $?" >> $O/gpu-$name.log ) & }
FA4_TEST_ONLY=softcap,pack,tail,dynamic,window run fwd build/tests/test_gpu_forward
run serving build/tests/test_gpu_serving
wait
run fp8s build/tests/test_gpu_fp8_serving
FA4_TEST_ONLY=grid run grid build/tests/test_gpu_forward
wait
for f in $O/gpu-*.log; do echo "$f: $(grep -c '^ok' $f) ok, $(grep -c '^not ok' $f) not ok, $(grep -c '# SKIP' $f) skip, $(tail -1 $f)"; grep '^not ok' $f | head -8 | cut -c1-300; done
