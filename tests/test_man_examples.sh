#!/bin/sh
# The man pages' example programs: the text in each page equals
# man/examples/<page>.c (man/check-examples.sh, TAP), and each compiles.
srcdir=${srcdir:-$(dirname "$0")/..}
"$srcdir/man/check-examples.sh" "$srcdir/man" "$srcdir/lib/fa4.h" > check.out.$$ 2>&1
status=$?
grep -v '^1\.\.' check.out.$$ | sed -n '/^\(not \)\{0,1\}ok /p' > lines.$$
n=$(wc -l < lines.$$)
i=0
while IFS= read -r line; do
    i=$((i + 1))
    echo "$line" | sed "s/^\(not \)\{0,1\}ok [0-9]*/\1ok $i/"
done < lines.$$
rm -f check.out.$$ lines.$$
[ "$n" -gt 0 ] || { i=$((i + 1)); echo "not ok $i - check-examples.sh ran (exit $status)"; }
for f in "$srcdir"/man/examples/*.c; do
    i=$((i + 1))
    if ${CC:-cc} -std=c11 -Wall -Werror -I"$srcdir/lib" -c "$f" -o /dev/null 2>/dev/null; then
        echo "ok $i - example $(basename "$f") compiles"
    else
        echo "not ok $i - example $(basename "$f") compiles"
    fi
done
echo "1..$i"
