#!/bin/bash
# SASS of five d128 cap-30 variants (192 x 80, built here with the compile
# probe): HEAD's kernels at tanh 0 / 50, this tree's at 0 / 50 / 75;
# instruction counts per opcode.
O=${OUT:-/tmp}; mkdir -p $O/sass
for f in _dev/sass/*.cubin; do
  n=$(basename $f .cubin)
  cuobjdump -sass $f > $O/sass/$n.sass 2>&1
  grep -oE '^\s+/\*[0-9a-f]+\*/\s+[A-Z0-9_.]+' $O/sass/$n.sass | awk '{print $2}' | sed 's/\..*//' | sort | uniq -c | sort -rn > $O/sass/$n.ops
  echo "$n: $(grep -cE '^\s+/\*[0-9a-f]+\*/' $O/sass/$n.sass) instructions; $(grep -E ' (MUFU|FFMA|FMUL|FADD|FSETP|FMNMX)$' $O/sass/$n.ops | tr '\n' ' ')"
done
