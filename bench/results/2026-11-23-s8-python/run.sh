#!/bin/bash
# The Python package's tests on the H100 (fp8 varlen and kv-cache included), then a
# third compare.py run with the re-tuned seed.  Carries: _lite, _peers.
O=$OUT; export FA4_DB=/tmp/s8py.db FA4_SYSTEM_DB= FA4_LIBRARY=$(pwd)/_lite/.libs/libfa4.so
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
timeout 300 python3 python/tests/run.py --no-pytest --tap > $O/python-tests.txt 2>$O/python-tests-stderr.txt; echo "python tests rc=$?"
tail -2 $O/python-tests.txt; grep -c "^ok" $O/python-tests.txt; grep "^not ok" $O/python-tests.txt | head -20; grep -c "# SKIP" $O/python-tests.txt
OUT=$O/compare RUNS=1 LIMIT=250 bash bench/results/2026-11-23-s8-compare/run.sh
