#!/bin/bash
# Two Q slots for varlen batches: correctness first (test_gpu_serving's
# varlen prefill shapes, the two new short ones among them; test_gpu_forward
# whole), then HEAD's library (one slot for varlen) against this one, short
# varlen prefill through the public API, separate processes alternating,
# three rounds.  Carries _dev (this build), _dev/old (HEAD's libfa4.so).
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O/vl; export FA4_SYSTEM_DB=
export LD_LIBRARY_PATH=$PWD/_dev/.libs
D=bench/results/2026-11-24-s27
T0=$(date +%s)
FA4_TEST_SHAPES="varlen prefill" timeout 200 _dev/tests/test_gpu_serving > $O/vl/serving.tap 2>&1
echo "serving rc=$? ok $(grep -c '^ok' $O/vl/serving.tap) not-ok $(grep -c '^not ok' $O/vl/serving.tap) $(( $(date +%s) - T0 )) s"
grep "^not ok" $O/vl/serving.tap | head -5
grep "q slots" $O/vl/serving.tap | cut -c1-200 | head -20
for r in 1 2 3; do
  for lib in old new; do
    if [ $lib = old ]; then L=_dev/old/libfa4.so; else L=_dev/.libs/libfa4.so; fi
    python3 $D/varlen_ab.py --lib $L 2>&1 | sed "s/^/r$r $lib /" >> $O/vl/ab.txt
  done
done
echo "ab $(( $(date +%s) - T0 )) s"
python3 - $O/vl/ab.txt <<'PY'
import collections, statistics, sys
t = collections.defaultdict(lambda: collections.defaultdict(list)); desc = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) > 4 and f[2] == "row":
        t[f[3]][f[1]].append(float(f[4][3:]))
        desc[(f[3], f[1])] = " ".join(f[6:])[:60]
for name, d in t.items():
    ch = [(b / a - 1) * 100 for a, b in zip(d["old"], d["new"])]
    print("%-42s old %s new %s change %s median %+.1f%%" % (name, " ".join("%.4f" % x for x in d["old"]),
          " ".join("%.4f" % x for x in d["new"]), " ".join("%+.1f%%" % c for c in ch), statistics.median(ch)))
PY
grep NaN $O/vl/ab.txt | head -3
( FA4_DB=/tmp/g1.db timeout 150 _dev/tests/test_gpu_forward > $O/vl/forward.tap 2>&1; echo "exit $?" >> $O/vl/forward.tap )
echo "forward ok $(grep -c '^ok' $O/vl/forward.tap) not-ok $(grep -c '^not ok' $O/vl/forward.tap)"
