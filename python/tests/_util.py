"""Helpers of the fa4 package's tests, usable under pytest and under run.py's own
runner: a skip is unittest.SkipTest, which both report as a skip."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.dirname(HERE)
REPO = os.path.dirname(PYDIR)

if PYDIR not in sys.path and not os.environ.get("FA4_TEST_INSTALLED"):
    sys.path.insert(0, PYDIR)   # the package of this tree, not an installed one


def skip(reason):
    raise unittest.SkipTest(reason)


def need_torch():
    """PyTorch, or skip."""
    try:
        import torch
    except ImportError as e:
        skip("no PyTorch (%s)" % e)
    return torch


def need_gpu():
    """PyTorch with a CUDA device, or skip."""
    torch = need_torch()
    if not torch.cuda.is_available():
        skip("no CUDA device")
    return torch


def header_path():
    """lib/fa4.h of this tree ($FA4_HEADER in a VPATH build), or skip."""
    path = os.environ.get("FA4_HEADER") or os.path.join(REPO, "lib", "fa4.h")
    if not os.path.isfile(path):
        skip("no fa4.h at %s" % path)
    return path


def header_text():
    with open(header_path()) as f:
        return f.read()


_dump = None


def abi_dump():
    """The output of tests/abi_dump.c: $FA4_ABI_DUMP (built by make check), else
    build/tests/abi_dump of this tree, else compiled here with cc.  Skips only
    where none of these exists."""
    global _dump
    if _dump is not None:
        return _dump
    exe = os.environ.get("FA4_ABI_DUMP") or os.path.join(REPO, "build", "tests", "abi_dump")
    tmp = None
    if not os.path.isfile(exe):
        cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
        src = os.path.join(REPO, "tests", "abi_dump.c")
        if not cc or not os.path.isfile(src):
            skip("no tests/abi_dump program and no C compiler to build it")
        tmp = tempfile.mkdtemp()
        exe = os.path.join(tmp, "abi_dump")
        subprocess.run(cc.split() + ["-std=gnu11", "-I" + os.path.dirname(header_path()), src, "-o", exe],
                       check=True)
    try:
        _dump = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    return _dump


def tool_env(**changes):
    """os.environ with CHANGES (None removes), and this tree's package on PYTHONPATH."""
    env = dict(os.environ)
    env["PYTHONPATH"] = PYDIR + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    for k, v in changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env
