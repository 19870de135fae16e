"""Finding and loading libfa4.so, its errors as Python exceptions, and thin
wrappers of its handles (Context, Plan).  Needs neither PyTorch nor a GPU.

Where the library is looked for, in order (the first that loads wins):
  1. $FA4_LIBRARY: a path to libfa4.so; when set, nothing else is tried;
  2. pkg-config: the libdir of fa4.pc (an installed libfa4, or $PKG_CONFIG_PATH);
  3. the install prefix: <sys.prefix>/lib, then the dynamic loader's own search
     ($LD_LIBRARY_PATH, ld.so.cache: /usr/local/lib, /usr/lib, ...);
  4. an in-tree build: <source tree>/build/.libs, for this package in the
     source tree and for a copy installed from it (the tree is recorded then).
"""
import ctypes as C
import os
import subprocess
import sys
import threading

from . import _abi

LIBRARY_NAMES = ("libfa4.so", "libfa4.so.0")


class Fa4Error(RuntimeError):
    """A libfa4 call failed.  status is the fa4_status code, status_name its C
    name, function the C function, and message the library's detail text
    (fa4_context_errmsg), which names the field or limit at fault."""

    def __init__(self, function, status, message):
        self.function = function
        self.status = int(status)
        self.status_name = _abi.STATUS_NAMES.get(self.status, "status %d" % self.status)
        self.message = message
        super().__init__("%s: %s%s" % (function, self.status_name, ": " + message if message else ""))


class LibraryNotFoundError(OSError):
    """libfa4.so could not be found or loaded; tried lists (place, outcome)."""

    def __init__(self, tried):
        self.tried = tried
        lines = ["libfa4 could not be loaded. Tried:"]
        lines += ["  %s: %s" % (where, why) for where, why in tried]
        lines.append("Set FA4_LIBRARY to the path of libfa4.so, or build libfa4 (scripts/setup) "
                     "or install it (make install) where pkg-config finds fa4.pc.")
        super().__init__("\n".join(lines))


def _source_tree():
    """The libfa4 source tree this package belongs to: the parent of python/ when
    running from the tree (or an editable install), else the tree recorded when
    the package was built (fa4/_paths.py, written by python/setup.py)."""
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.dirname(os.path.dirname(here))
    if os.path.isfile(os.path.join(top, "lib", "fa4.h")):
        return top
    try:
        from . import _paths
        return _paths.SOURCE_TREE
    except ImportError:
        return None


def _pkg_config_libdir(env):
    """(libdir of fa4.pc, None) or (None, why not)."""
    try:
        r = subprocess.run(["pkg-config", "--variable=libdir", "fa4"], env=env,
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        return None, "pkg-config not runnable (%s)" % e
    if r.returncode != 0 or not r.stdout.strip():
        return None, "no fa4.pc (%s)" % (r.stderr.strip().splitlines() or ["not found"])[0]
    return r.stdout.strip(), None


def candidates(env=None):
    """The places to look for libfa4, in order: a list of (label, path or None, why
    it is skipped).  ENV defaults to os.environ."""
    env = os.environ if env is None else env
    explicit = env.get("FA4_LIBRARY")
    if explicit:
        return [("$FA4_LIBRARY", explicit, None)]
    out = [("$FA4_LIBRARY", None, "not set")]
    libdir, why = _pkg_config_libdir(env)
    if libdir:
        out += [("pkg-config fa4", os.path.join(libdir, n), None) for n in LIBRARY_NAMES]
    else:
        out.append(("pkg-config fa4", None, why))
    out += [("install prefix", os.path.join(sys.prefix, "lib", n), None) for n in LIBRARY_NAMES]
    out.append(("dynamic loader", "libfa4.so.0", None))
    top = _source_tree()
    if top:
        out += [("in-tree build", os.path.join(top, "build", ".libs", n), None) for n in LIBRARY_NAMES]
    else:
        out.append(("in-tree build", None, "no source tree known"))
    return out


class Library:
    """libfa4 loaded with ctypes and its prototypes declared.  Its attributes
    are the C functions (lib.fa4_version(), ...); path is the file, found says
    how it was found."""

    def __init__(self, path, found="given"):
        self.path = path
        self.found = found
        self.cdll = _abi.declare(C.CDLL(path))
        for name in _abi.FUNCTIONS:
            setattr(self, name, getattr(self.cdll, name))

    def version(self):
        """The library's version string (fa4_version)."""
        return self.fa4_version().decode()

    def status_string(self, status):
        return self.fa4_status_string(status).decode()

    def check_problem(self, problem):
        """fa4_problem_check: None when PROBLEM is valid, else raise Fa4Error."""
        why = C.create_string_buffer(512)
        st = self.fa4_problem_check(C.byref(problem), why, len(why))
        if st:
            raise Fa4Error("fa4_problem_check", st, why.value.decode(errors="replace"))

    def config_text(self, config):
        buf = C.create_string_buffer(512)
        return self.fa4_config_format(C.byref(config), buf, len(buf)).decode()

    def source_text(self, source):
        return self.fa4_config_source_string(source).decode()


def find_library(env=None):
    """Load libfa4 from the first place of candidates() that works; raise
    LibraryNotFoundError listing every place tried otherwise."""
    tried = []
    for label, path, why in candidates(env):
        if path is None:
            tried.append((label, why))
            continue
        if os.sep in path and not os.path.exists(path):
            tried.append((label, "%s: no such file" % path))
            continue
        try:
            return Library(path, label)
        except OSError as e:
            tried.append((label, "%s: %s" % (path, e)))
        except AttributeError as e:   # a library without the API's symbols
            tried.append((label, "%s: not libfa4 (%s)" % (path, e)))
    raise LibraryNotFoundError(tried)


_default = None
_default_lock = threading.Lock()


def library():
    """The process's libfa4 (found once, by find_library())."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = find_library()
    return _default


class Context:
    """An fa4_context: one GPU's driver handles, databases and kernel cache.

    Context(device) opens one on a CUDA device (ordinal as in cuDeviceGet);
    Context(plan_only=True, arch="sm_90a") needs no GPU and makes plans that
    compile but cannot launch.  db_path, system_db_path, no_database and
    check_inputs are the fields of fa4_context_options."""

    def __init__(self, device=0, *, lib=None, db_path=None, system_db_path=None,
                 no_database=False, plan_only=False, arch=None, check_inputs=False):
        self.lib = lib or library()
        self.device = device
        self._keep = [s.encode() if s else None for s in (db_path, system_db_path, arch)]
        opts = _abi.ContextOptions.init(db_path=self._keep[0], system_db_path=self._keep[1],
                                        no_database=int(no_database), plan_only=int(plan_only),
                                        arch=self._keep[2], check_inputs=int(check_inputs))
        handle = C.c_void_p()
        st = self.lib.fa4_context_create(C.byref(handle), device, C.byref(opts))
        if st:
            raise Fa4Error("fa4_context_create", st, self.lib.fa4_context_last_error().decode())
        self.handle = handle.value

    def errmsg(self):
        """The detail of the last failure on this context in this thread."""
        return self.lib.fa4_context_errmsg(self.handle).decode(errors="replace")

    def error(self, function, status):
        """An Fa4Error for STATUS just returned by FUNCTION on this context (call it
        in the failing thread, before any other call on the context)."""
        return Fa4Error(function, status, self.errmsg())

    def warnings(self):
        return self.lib.fa4_context_warnings(self.handle).decode(errors="replace")

    def plan(self, problem, config=None, allow_heuristic=True, no_binary_cache=False):
        """fa4_plan_create for the fa4_problem PROBLEM (an _abi.Problem); CONFIG, an
        _abi.Config, forces a kernel variant.  Returns a Plan."""
        opts = _abi.PlanOptions.init(config=C.pointer(config) if config is not None else None,
                                     allow_heuristic=int(allow_heuristic),
                                     no_binary_cache=int(no_binary_cache))
        handle = C.c_void_p()
        st = self.lib.fa4_plan_create(C.byref(handle), self.handle, C.byref(problem), C.byref(opts))
        if st:
            raise self.error("fa4_plan_create", st)
        return Plan(self, handle.value, problem)

    def close(self):
        """fa4_context_destroy.  Destroy this context's plans first."""
        if self.handle:
            self.lib.fa4_context_destroy(self.handle)
            self.handle = None


class Plan:
    """An fa4_plan: a compiled, loaded kernel for a problem class."""

    def __init__(self, context, handle, problem):
        self.context = context
        self.handle = handle
        self.problem = problem
        cfg = _abi.Config.init()
        src = C.c_int()
        context.lib.fa4_plan_config(handle, C.byref(cfg), C.byref(src))
        self.config, self.source = cfg, src.value
        size = C.c_size_t()
        context.lib.fa4_plan_workspace_size(handle, C.byref(size))
        self.workspace_size = size.value

    @property
    def family(self):
        return self.config.family

    def describe(self):
        """(config text, source name): fa4_config_format and fa4_config_source_string."""
        lib = self.context.lib
        return lib.config_text(self.config), lib.source_text(self.source)

    def forward(self, tensors, stream=None):
        """fa4_forward with the _abi.Tensors TENSORS on STREAM (a CUstream as int;
        None: the legacy default stream)."""
        st = self.context.lib.fa4_forward(self.handle, C.addressof(tensors), stream)
        if st:
            raise self.context.error("fa4_forward", st)

    def destroy(self):
        """fa4_plan_destroy.  Its launches still queued are unaffected."""
        if self.handle:
            self.context.lib.fa4_plan_destroy(self.handle)
            self.handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy()
