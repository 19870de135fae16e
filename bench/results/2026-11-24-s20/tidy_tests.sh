#!/bin/bash
# The tree with the softmax and score-preparation helpers (same machine
# code for the 40 seed rows: fa4-tune codes/rehash) and the tuner's kept
# incumbent: test_gpu_forward's softcap, jumps, window and tail sections,
# test_gpu_serving, test_tune_gpu, at once.  Carries: _dev as build.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
( FA4_DB=/tmp/a1.db FA4_TEST_ONLY="softcap jumps window tail" timeout 330 build/tests/test_gpu_forward > $O/forward.log 2>&1; echo "exit $?" >> $O/forward.log ) &
( FA4_DB=/tmp/a2.db timeout 330 build/tests/test_gpu_serving > $O/serving.log 2>&1; echo "exit $?" >> $O/serving.log ) &
( FA4_DB=/tmp/a3.db timeout 330 build/tests/test_tune_gpu > $O/tune_gpu.log 2>&1; echo "exit $?" >> $O/tune_gpu.log ) &
wait
for t in forward serving tune_gpu; do
  echo "$t: $(grep -c '^ok' $O/$t.log) ok, $(grep -c '^not ok' $O/$t.log) not ok, $(tail -1 $O/$t.log) $(grep '^1\.\.' $O/$t.log)"; grep -A3 '^not ok' $O/$t.log | head -12
done
