#!/bin/bash
# The committed tree: the new short varlen shapes of test_gpu_serving, the
# qslots section of test_gpu_forward's first minutes, then compare.py twice
# at the committed seed (compare.sh).  Carries _dev, _dev/rh.db, _peers.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O/final; export FA4_SYSTEM_DB=
export LD_LIBRARY_PATH=$PWD/_dev/.libs
FA4_TEST_SHAPES="q slots" timeout 120 _dev/tests/test_gpu_serving > $O/final/serving.tap 2>&1
echo "serving rc=$? ok $(grep -c '^ok' $O/final/serving.tap) not-ok $(grep -c '^not ok' $O/final/serving.tap)"
OUT=$O/final/compare bash bench/results/2026-11-24-s27/compare.sh 2>&1 | grep -v "^  behind.*8192 .*8192"
