#!/bin/sh
# The Python package's tests (python/tests) as TAP, through python/tests/run.py:
# pytest when the interpreter has it, else run.py's own runner.  They use this
# build's library, fa4-tune and tests/abi_dump (the header's layout, which the
# package's ctypes description must match).  Tests needing PyTorch or a GPU
# skip where there are none.
srcdir=${srcdir:-$(dirname "$0")/..}
py=${PYTHON:-python3}
if ! command -v "$py" >/dev/null 2>&1; then
    echo "1..0 # SKIP no $py"
    exit 0
fi
if [ ! -f .libs/libfa4.so ]; then
    echo "1..0 # SKIP no shared libfa4 in this build (configure --disable-shared?)"
    exit 0
fi
top=$(pwd)
FA4_LIBRARY=$top/.libs/libfa4.so
FA4_TUNE=$top/fa4-tune
FA4_ABI_DUMP=$top/tests/abi_dump
FA4_HEADER=$(cd "$srcdir/lib" && pwd)/fa4.h
PYTHONDONTWRITEBYTECODE=1
export FA4_LIBRARY FA4_TUNE FA4_ABI_DUMP FA4_HEADER PYTHONDONTWRITEBYTECODE
exec "$py" "$srcdir/python/tests/run.py" --tap
