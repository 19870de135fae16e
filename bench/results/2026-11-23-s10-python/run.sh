#!/bin/bash
# The Python package's whole test suite on the H100 at the final library
# (fp8 on the sm80 family, varlen queries over pages on sm90).  Carries: build.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s10p.db FA4_SYSTEM_DB=
export PYTHONPATH=$(pwd)/python FA4_LIBRARY=$(pwd)/build/.libs/libfa4.so
timeout 420 python3 python/tests/run.py --tap > $O/python-tests.txt 2>$O/python-tests-stderr.txt
echo "python tests rc=$?: $(grep -c '^ok' $O/python-tests.txt) ok, $(grep -c '^not ok' $O/python-tests.txt) not ok"
grep -E '^not ok' $O/python-tests.txt | cut -c1-300 | head; tail -2 $O/python-tests-stderr.txt
