#!/bin/bash
# FA4_DIAG_HALF gated to tiles without warpgroup key ranges: the GPU tests
# of its section and the serving paths (varlen and paged prefill under the
# 128x128 overrides), alone; then the seven seed rows whose machine code
# changed re-tuned (coarse) over the seed rehashed to these sources.
# Carries: _dev as build, _dev/rh.db.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
T0=$(date +%s)
( FA4_DB=/tmp/g1.db FA4_TEST_ONLY="half" timeout 250 build/tests/test_gpu_forward > $O/forward.log 2>&1; echo "exit $?" >> $O/forward.log ) &
( FA4_DB=/tmp/g2.db timeout 250 build/tests/test_gpu_serving > $O/serving.log 2>&1; echo "exit $?" >> $O/serving.log ) &
wait
for t in forward serving; do echo "$t: $(grep -c '^ok' $O/$t.log) ok, $(grep -c '^not ok' $O/$t.log) not ok, $(tail -1 $O/$t.log) $(grep '^1\.\.' $O/$t.log)"; grep -A3 '^not ok' $O/$t.log | head -8; done
echo "tests $(( $(date +%s) - T0 )) s"
cp _dev/rh.db /tmp/tune.db
timeout 300 build/fa4-tune tune --problems bench/results/2026-11-24-s22/half.json --strategy coarse -j 16 \
    --db /tmp/tune.db > $O/tune.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 )) s"; grep -E "^==|search:|confirmed|stored|kept" $O/tune.txt | cut -c1-230
build/fa4-tune export --json $O/seed.json --db /tmp/tune.db > /dev/null 2>&1; echo "export rc=$?"
cp /tmp/tune.db $O/tune.db
