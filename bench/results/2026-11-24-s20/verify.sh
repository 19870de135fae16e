#!/bin/bash
# The tuner's verify verdicts at the committed tree: test_tune_gpu (tune,
# store, verify JSON), then fa4-tune verify over the shipped seed's
# winners for this GPU with --confirm 6 (verdicts only; nothing dropped).
# Carries: _dev as build.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
( FA4_DB=/tmp/v1.db timeout 200 build/tests/test_tune_gpu > $O/tune_gpu.log 2>&1; echo "exit $?" >> $O/tune_gpu.log )
echo "tune_gpu: $(grep -c '^ok' $O/tune_gpu.log) ok, $(grep -c '^not ok' $O/tune_gpu.log) not ok, $(tail -1 $O/tune_gpu.log)"; grep -A3 '^not ok' $O/tune_gpu.log | head
build/fa4-tune import db/seed/h100-sxm.json --db /tmp/vs.db > /dev/null 2>&1
FA4_DB=/tmp/v2.db timeout 300 build/fa4-tune verify --db /tmp/vs.db > $O/verify.txt 2>&1; echo "verify rc=$?"
grep -E "^(holds|lost|noisy|failed|default|stale|skipped) " $O/verify.txt | awk '{print $1}' | sort | uniq -c
grep -E "^(lost|noisy) " $O/verify.txt | head -12
