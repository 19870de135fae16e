#!/bin/sh
#
# check-examples.sh -- keep the section-3 man pages honest.  Output is TAP;
# the exit status is 0 only when every check passes.
#
# For every page man/<page>.3 that is not a ".so" alias:
#   - its sections come in the order NAME, SYNOPSIS, DESCRIPTION,
#     RETURN VALUE, ERRORS, EXAMPLES, SEE ALSO;
#   - the program between .EX and .EE in its EXAMPLES section, with the
#     groff escapes undone (\e -> \, \- -> -, \(aq -> ', \& -> nothing),
#     is identical to man/examples/<page>.c, which make check compiles;
#   - every prototype in its SYNOPSIS is in lib/fa4.h, whitespace aside
#     (needs groff; skipped without it).
# Also: every man/examples/*.c has a page, every alias points at a page,
# and every function declared in lib/fa4.h has a page or an alias.
#
# Usage: man/check-examples.sh [MANDIR [HEADER]]
#   MANDIR defaults to the directory of this script, HEADER to
#   MANDIR/../lib/fa4.h.

mandir=${1:-$(dirname "$0")}
header=${2:-$mandir/../lib/fa4.h}
tmp=${TMPDIR:-/tmp}/fa4-check-examples.$$
trap 'rm -rf "$tmp"' EXIT HUP INT TERM
mkdir "$tmp" || exit 1

n=0
failed=0
ok()     { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; failed=1; }
diag()   { sed 's/^/# /'; }

# Undo the groff escapes that the example blocks use.
unescape() {
    sed -e 's/\\(aq/'"'"'/g' -e 's/\\&//g' -e 's/\\-/-/g' -e 's/\\e/\\/g'
}

# The lines between .EX and .EE inside the EXAMPLES section of page $1;
# the number of such blocks goes to $tmp/blocks.
extract_example() {
    awk -v count="$tmp/blocks" '
        /^\.SH /   { in_ex = ($0 ~ /^\.SH "?EXAMPLES"?[ \t]*$/); inblk = 0 }
        in_ex && /^\.EE/ { inblk = 0; next }
        inblk      { print }
        in_ex && /^\.EX/ { inblk = 1; blocks++ }
        END        { print blocks + 0 > count }
    ' "$1"
}

# The section names of page $1, one per line.
sections() {
    sed -n 's/^\.SH[ \t]*//p' "$1" | tr -d '"'
}

expected_sections='NAME
SYNOPSIS
DESCRIPTION
RETURN VALUE
ERRORS
EXAMPLES
SEE ALSO'

# The header as one line with single spaces, for prototype look-ups.
tr '\n\t' '  ' < "$header" | tr -s ' ' > "$tmp/header.flat" || exit 1

have_groff=0
command -v groff >/dev/null 2>&1 && have_groff=1

for page in "$mandir"/*.3; do
    [ -e "$page" ] || continue
    name=$(basename "$page" .3)

    # Alias pages: ".so man3/<target>.3", and nothing else.
    if head -n 1 "$page" | grep -q '^\.so '; then
        target=$(sed -n '1s/^\.so[ \t]*man3\///p' "$page")
        if [ "$(wc -l < "$page")" -eq 1 ] && [ -n "$target" ] &&
           [ -f "$mandir/$target" ] &&
           ! head -n 1 "$mandir/$target" | grep -q '^\.so '; then
            ok "$name.3 is an alias of $target"
        else
            not_ok "$name.3 is an alias of an existing page"
        fi
        continue
    fi

    if [ "$(sections "$page")" = "$expected_sections" ]; then
        ok "$name.3 has the sections in order"
    else
        not_ok "$name.3 has the sections in order"
        sections "$page" | diag
    fi

    example=$mandir/examples/$name.c
    extract_example "$page" | unescape > "$tmp/$name.c"
    blocks=$(cat "$tmp/blocks")
    if [ "$blocks" -ne 1 ]; then
        not_ok "$name.3 has one .EX block in EXAMPLES (found $blocks)"
    elif [ ! -f "$example" ]; then
        not_ok "$name.3 example has its file examples/$name.c"
    elif diff -u "$example" "$tmp/$name.c" > "$tmp/diff"; then
        ok "$name.3 example matches examples/$name.c"
    else
        not_ok "$name.3 example matches examples/$name.c"
        diag < "$tmp/diff"
    fi

    if [ $have_groff -eq 0 ]; then
        ok "# SKIP $name.3 synopsis check needs groff"
        continue
    fi
    # Render the page, keep the SYNOPSIS section, cut it into statements.
    groff -man -Tutf8 -rLL=200n -P-cbou "$page" 2>/dev/null |
        awk '/^[A-Z]/ { in_syn = ($0 == "SYNOPSIS"); next } in_syn' |
        grep -v '^ *#' | tr '\n\t' '  ' | tr -s ' ' | tr ';' '\n' |
        sed -e 's/^ *//' -e 's/ *$//' |
        grep '(' | sed 's/$/;/' > "$tmp/protos"
    missing=0
    nprotos=0
    while IFS= read -r proto; do
        nprotos=$((nprotos + 1))
        if ! grep -qF -- "$proto" "$tmp/header.flat"; then
            echo "not in fa4.h: $proto" >> "$tmp/missing"
            missing=1
        fi
    done < "$tmp/protos"
    if [ $nprotos -eq 0 ]; then
        not_ok "$name.3 synopsis has prototypes"
    elif [ $missing -eq 0 ]; then
        ok "$name.3 synopsis matches fa4.h ($nprotos prototypes)"
    else
        not_ok "$name.3 synopsis matches fa4.h"
        diag < "$tmp/missing"
        rm -f "$tmp/missing"
    fi
done

for example in "$mandir"/examples/*.c; do
    [ -e "$example" ] || continue
    name=$(basename "$example" .c)
    if [ -f "$mandir/$name.3" ]; then
        ok "examples/$name.c belongs to $name.3"
    else
        not_ok "examples/$name.c belongs to a page"
    fi
done

# Every function declared in fa4.h has a page of its own name (one word
# per name, so a for loop is fine).
# shellcheck disable=SC2013
for fn in $(sed -n 's/^[a-z][a-z0-9_ ]*[ *]\(fa4_[a-z0-9_]*\)(.*/\1/p' "$header"); do
    if [ -f "$mandir/$fn.3" ]; then
        ok "$fn has a page"
    else
        not_ok "$fn has a page ($fn.3)"
    fi
done

echo "1..$n"
exit $failed
