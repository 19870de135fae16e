#!/bin/sh
# find_package(fa4) from an installed libfa4, as TAP: `make install` staged
# under a DESTDIR, then tests/cmake-consumer configured, built and run against
# it.  With $FA4_CMAKE_PREFIX (make installcheck) the installed prefix is used
# instead of a staging.  Skips without cmake.
srcdir=${srcdir:-$(dirname "$0")/..}
if ! command -v cmake >/dev/null 2>&1; then
    echo "1..0 # SKIP no cmake"
    exit 0
fi
work=$(pwd)/tests/cmake-consumer.$$
rm -rf "$work"
mkdir -p "$work" || exit 1
trap 'rm -rf "$work"' EXIT HUP INT TERM
n=0
fail=0
ok()     { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; sed 's/^/# /' "$2" | tail -n 30; }

if [ -n "${FA4_CMAKE_PREFIX:-}" ]; then
    prefix=$FA4_CMAKE_PREFIX
else
    # The staging: the configured prefix under a DESTDIR.  A make of its own,
    # off the check's job server: it only copies what is built.
    prefix=$work/stage$(sed -n 's/^prefix=//p' fa4.pc)
    if MAKEFLAGS= MFLAGS= ${MAKE:-make} install DESTDIR="$work/stage" > "$work/install.log" 2>&1; then
        ok "make install DESTDIR= stages libfa4"
    else
        not_ok "make install DESTDIR= stages libfa4" "$work/install.log"
    fi
fi
config=$(find "$prefix" -path '*/cmake/fa4/fa4-config.cmake' 2>/dev/null | head -n 1)
if [ -n "$config" ] && [ -f "$(dirname "$config")/fa4-config-version.cmake" ]; then
    ok "fa4-config.cmake and fa4-config-version.cmake are installed (${config#"$prefix"/})"
else
    echo "no cmake/fa4/fa4-config.cmake and fa4-config-version.cmake under $prefix" > "$work/none.log"
    not_ok "fa4-config.cmake and fa4-config-version.cmake are installed" "$work/none.log"
fi
if cmake -S "$srcdir/tests/cmake-consumer" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" \
         -DCMAKE_C_COMPILER="${CC:-cc}" > "$work/configure.log" 2>&1; then
    ok "find_package(fa4 0.1) finds the installed libfa4"
else
    not_ok "find_package(fa4 0.1) finds the installed libfa4" "$work/configure.log"
fi
if cmake --build "$work/build" > "$work/build.log" 2>&1; then
    ok "a program linked with fa4::fa4 builds"
else
    not_ok "a program linked with fa4::fa4 builds" "$work/build.log"
fi
if "$work/build/consumer" > "$work/run.log" 2>&1 && grep -q "^libfa4 " "$work/run.log"; then
    ok "it runs with the installed library ($(cat "$work/run.log"))"
else
    not_ok "it runs with the installed library" "$work/run.log"
fi
# A version the installed one does not satisfy is refused.
mkdir -p "$work/v99"
sed 's/find_package(fa4 0.1 REQUIRED)/find_package(fa4 99.0 REQUIRED)/' \
    "$srcdir/tests/cmake-consumer/CMakeLists.txt" > "$work/v99/CMakeLists.txt"
cp "$srcdir/tests/cmake-consumer/main.c" "$work/v99/"
if cmake -S "$work/v99" -B "$work/v99/build" -DCMAKE_PREFIX_PATH="$prefix" \
         -DCMAKE_C_COMPILER="${CC:-cc}" > "$work/v99.log" 2>&1; then
    not_ok "find_package(fa4 99.0) is refused" "$work/v99.log"
else
    ok "find_package(fa4 99.0) is refused"
fi
echo "1..$n"
exit $fail
