"""Finding and loading libfa4, and the C API through fa4._lib without a GPU:
status strings, problem checks, plan_only contexts, and errors that carry the
library's message.  Needs no GPU and no PyTorch."""
import os
import subprocess
import sys
import tempfile

import _util
import fa4
from fa4 import _abi, _lib


def test_library_loads():
    lib = fa4.library()
    assert os.path.exists(lib.path) or lib.found == "dynamic loader", lib.path
    assert lib.version() == _abi.HEADER_VERSION, "libfa4 %s, binding %s" % (lib.version(), _abi.HEADER_VERSION)


def test_fa4_library_is_the_only_place_when_set():
    env = {"FA4_LIBRARY": "/nonexistent/libfa4.so", "PATH": os.environ.get("PATH", "")}
    assert [c[0] for c in _lib.candidates(env)] == ["$FA4_LIBRARY"]
    try:
        _lib.find_library(env)
    except _lib.LibraryNotFoundError as e:
        assert "/nonexistent/libfa4.so" in str(e) and "FA4_LIBRARY" in str(e), str(e)
    else:
        raise AssertionError("a missing $FA4_LIBRARY loaded something")


def test_error_lists_every_place_tried():
    """Nothing to find: the error names each place with the reason (run in a
    child whose package has no source tree and whose pkg-config finds nothing)."""
    code = ("import fa4._lib as L, sys\n"
            "L._source_tree = lambda: None\n"
            "try:\n    L.find_library()\nexcept L.LibraryNotFoundError as e:\n    print(e); sys.exit(0)\n"
            "print('FOUND', L.find_library().path); sys.exit(3)\n")
    with tempfile.TemporaryDirectory() as empty:
        env = _util.tool_env(FA4_LIBRARY=None, PKG_CONFIG_PATH=empty, PKG_CONFIG_LIBDIR=empty,
                             LD_LIBRARY_PATH=None)
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if r.returncode == 3:
        _util.skip("a libfa4 is installed where the dynamic loader looks (%s)" % r.stdout.strip())
    assert r.returncode == 0, r.stdout + r.stderr
    for label in ("$FA4_LIBRARY: not set", "pkg-config fa4", "install prefix", "dynamic loader",
                  "in-tree build: no source tree known", "Set FA4_LIBRARY"):
        assert label in r.stdout, "%r not in:\n%s" % (label, r.stdout)


def test_found_through_pkg_config():
    """A fa4.pc whose libdir holds the library is enough."""
    libdir = os.path.dirname(os.path.abspath(fa4.library().path))
    with tempfile.TemporaryDirectory() as pc:
        with open(os.path.join(pc, "fa4.pc"), "w") as f:
            f.write("libdir=%s\n\nName: libfa4\nDescription: test\nVersion: %s\nLibs: -L${libdir} -lfa4\n"
                    % (libdir, _abi.HEADER_VERSION))
        env = dict(os.environ, PKG_CONFIG_PATH=pc)
        env.pop("FA4_LIBRARY", None)
        if _lib._pkg_config_libdir(env)[0] is None:
            _util.skip("pkg-config is not usable here: %s" % _lib._pkg_config_libdir(env)[1])
        lib = _lib.find_library(env)
    assert lib.found == "pkg-config fa4" and os.path.dirname(lib.path) == libdir, (lib.found, lib.path)


def test_in_tree_build_is_a_candidate():
    if not os.path.isfile(os.path.join(_util.REPO, "lib", "fa4.h")):
        _util.skip("not in the source tree")
    paths = [p for label, p, _ in _lib.candidates({}) if label == "in-tree build"]
    assert os.path.join(_util.REPO, "build", ".libs", "libfa4.so") in paths, paths


def test_status_strings():
    lib = fa4.library()
    assert lib.status_string(_abi.EINVAL) == "invalid argument"
    assert lib.status_string(99) == "unknown status"
    assert lib.source_text(_abi.SOURCE_STALE) == "stale"


def _problem(**fields):
    base = dict(batch=2, seqlen_q=128, seqlen_k=128, heads_q=4, heads_kv=2, head_dim_qk=64)
    base.update(fields)
    return _abi.Problem.init(**base)


def test_problem_check_messages():
    lib = fa4.library()
    lib.check_problem(_problem())
    cases = [(dict(head_dim_qk=72), "head_dim_qk=72"),
             (dict(heads_q=3), "heads_q=3 is not a multiple of heads_kv=2"),
             (dict(batch=0), "batch=0"),
             (dict(causal=1, window_right=5), "window_right=5 with causal=1"),
             (dict(q_strides=(8192, 256, 3)), "multiple of 8 elements")]
    for fields, text in cases:
        try:
            lib.check_problem(_problem(**fields))
        except fa4.Fa4Error as e:
            assert e.status == _abi.EINVAL and e.status_name == "FA4_EINVAL", e
            assert text in e.message and text in str(e), "%r not in %r" % (text, e.message)
        else:
            raise AssertionError("fa4_problem_check accepted %s" % fields)


def test_context_on_device_0():
    """With a GPU a context opens; without one the error is FA4_ENODEV (or
    FA4_ECUDA) and says why."""
    try:
        ctx = _lib.Context(0)
    except fa4.Fa4Error as e:
        assert e.status in (_abi.ENODEV, _abi.ECUDA), e
        assert e.function == "fa4_context_create" and e.message, e
    else:
        ctx.close()


def test_context_without_a_driver():
    code = ("import fa4._lib as L\n"
            "try:\n    L.Context(0)\nexcept L.Fa4Error as e:\n    print(e.status_name, e.message)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=_util.tool_env(FA4_CUDA_DRIVER="/nonexistent/libcuda.so.1"))
    assert r.returncode == 0 and r.stdout.startswith("FA4_ENODEV"), r.stdout + r.stderr
    assert "no CUDA driver" in r.stdout, r.stdout


def _plan_only():
    return _lib.Context(plan_only=True, arch="sm_90a", no_database=True)


def test_plan_only_context_plans_and_reports_its_config():
    ctx = _plan_only()
    try:
        with ctx.plan(_problem(causal=1)) as plan:
            text, source = plan.describe()
            assert source == "heuristic", source
            assert text.split()[0] in ("sm80", "sm90"), text
            assert plan.family in (_abi.FAMILY_SM80, _abi.FAMILY_SM90)
            assert plan.workspace_size >= 0
            # The same config, given explicitly, is planned as "explicit".
            with ctx.plan(_problem(causal=1), config=plan.config) as again:
                assert again.describe() == (text, "explicit"), again.describe()
    finally:
        ctx.close()


def test_plan_errors_carry_the_message():
    ctx = _plan_only()
    try:
        try:
            ctx.plan(_problem(head_dim_qk=72))
        except fa4.Fa4Error as e:
            assert e.function == "fa4_plan_create" and e.status == _abi.EINVAL, e
            assert "head_dim_qk=72" in e.message, e.message
        else:
            raise AssertionError("a plan for head_dim 72")
    finally:
        ctx.close()


def test_forward_errors_carry_the_message():
    """fa4_forward of a plan_only plan: FA4_ENOTSUP, and errmsg says why."""
    ctx = _plan_only()
    try:
        with ctx.plan(_problem()) as plan:
            t = _abi.Tensors.init(q=4096, k=8192, v=12288, o=16384)
            try:
                plan.forward(t)
            except fa4.Fa4Error as e:
                assert e.function == "fa4_forward" and e.status == _abi.ENOTSUP, e
                assert "plan_only" in e.message, e.message
            else:
                raise AssertionError("a plan_only plan launched")
    finally:
        ctx.close()
