#!/bin/bash
# After folding the scheduler's tile-of-index and the sink choice: the
# tail, softcap/sinks, dynamic-scheduler and window sections of
# test_gpu_forward, and the grid section for the sm90 family.  Carries: build.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s11g.db FA4_SYSTEM_DB=
FA4_TEST_ONLY="tail softcap dynamic window" timeout 200 build/tests/test_gpu_forward > $O/sections.txt 2>&1
echo "sections rc=$?: $(grep -c '^ok' $O/sections.txt) ok, $(grep -c '^not ok' $O/sections.txt) not ok"
FA4_TEST_ONLY=grid FA4_FAMILIES=sm90 timeout 220 build/tests/test_gpu_forward > $O/grid-sm90.txt 2>&1
echo "grid sm90 rc=$?: $(grep -c '^ok' $O/grid-sm90.txt) ok, $(grep -c '^not ok' $O/grid-sm90.txt) not ok"
grep '^not ok' $O/*.txt | cut -c1-200 | head
