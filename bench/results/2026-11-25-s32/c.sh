#!/bin/bash
# b.sh's two ncu reports, printed.
for r in plan_bench_old plan_bench; do echo "=== $r"; ncu -i _dev/rep/$r.ncu-rep --page details 2>&1 | grep -vE "^\s*$|----" | head -150; done
