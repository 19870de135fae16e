"""python -m fa4: the library's whereabouts, and fa4-tune with shapes given as
tensor shapes.

    python -m fa4 info
    python -m fa4 tune --q B,SQ,HQ,D [--k B,SK,HKV,D] [--v B,SK,HKV,DV] [--print-command]
                       [any fa4-tune tune option: --causal --dtype fp16 --softcap 50 --sinks
                        --time-budget 60 ...]
    python -m fa4 tune show|verify|space|export|import|merge|check [options] [--print-command]

tune runs `fa4-tune tune` with --batch, --seqlen-q, --heads-q, --head-dim, ... taken
from the shapes; every other argument goes to fa4-tune unchanged (man fa4-tune).
fa4-tune is looked for as $FA4_TUNE, next to the library (../bin of an installed
libfa4, the build directory of an in-tree one), on PATH, then in the source tree's
build/.  --print-command prints the command instead of running it.
"""
import argparse
import os
import shutil
import subprocess
import sys

from . import _lib

TUNE_COMMANDS = ("tune", "space", "verify", "show", "export", "import", "merge", "check")


def find_tune(env=None):
    """(path of fa4-tune, places tried)."""
    env = os.environ if env is None else env
    tried = []
    if env.get("FA4_TUNE"):
        return env["FA4_TUNE"], tried
    places = []
    try:
        libdir = os.path.dirname(os.path.abspath(_lib.library().path))
        places += [os.path.join(libdir, "..", "bin", "fa4-tune"),     # installed: prefix/lib, prefix/bin
                   os.path.join(libdir, "..", "fa4-tune")]            # in-tree: build/.libs, build/
    except OSError as e:
        tried.append(("next to the library", str(e).splitlines()[0]))
    on_path = shutil.which("fa4-tune", path=env.get("PATH"))
    if on_path:
        places.append(on_path)
    else:
        tried.append(("PATH", "no fa4-tune"))
    top = _lib._source_tree()
    if top:
        places.append(os.path.join(top, "build", "fa4-tune"))
    for p in places:
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return os.path.normpath(p), tried
        tried.append((os.path.normpath(p), "not there"))
    return None, tried


def _shape(text):
    try:
        dims = [int(x) for x in text.replace("x", ",").split(",")]
    except ValueError:
        dims = []
    if len(dims) != 4 or min(dims) < 1:
        raise argparse.ArgumentTypeError("%r: expected BATCH,SEQLEN,HEADS,HEAD_DIM" % text)
    return dims


def tune_command(argv, tune_path="fa4-tune"):
    """The fa4-tune command line for `python -m fa4 tune ARGV`."""
    if argv and (argv[0] in TUNE_COMMANDS or argv[0] in ("--help", "--version")):
        return [tune_path] + list(argv)
    ap = argparse.ArgumentParser(prog="python -m fa4 tune", add_help=False)
    ap.add_argument("--q", type=_shape)
    ap.add_argument("--k", type=_shape)
    ap.add_argument("--v", type=_shape)
    known, rest = ap.parse_known_args(argv)
    cmd = [tune_path, "tune"]
    if known.q:
        b, sq, hq, d = known.q
        cmd += ["--batch", str(b), "--seqlen-q", str(sq), "--heads-q", str(hq), "--head-dim", str(d)]
        if known.k:
            kb, sk, hkv, kd = known.k
            if kb != b or kd != d:
                raise SystemExit("python -m fa4 tune: --k %s does not go with --q %s (batch and head_dim "
                                 "must agree)" % (",".join(map(str, known.k)), ",".join(map(str, known.q))))
            cmd += ["--seqlen-k", str(sk), "--heads-kv", str(hkv)]
        if known.v and known.v[3] != d:
            cmd += ["--head-dim-v", str(known.v[3])]
    elif known.k or known.v:
        raise SystemExit("python -m fa4 tune: --k and --v need --q")
    return cmd + rest


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if argv[0] == "info":
        lib = _lib.library()
        print("libfa4 %s: %s (found by %s)" % (lib.version(), lib.path, lib.found))
        path, _ = find_tune()
        print("fa4-tune: %s" % (path or "not found"))
        return 0
    if argv[0] != "tune":
        print("python -m fa4: unknown command %r (info, tune)" % argv[0], file=sys.stderr)
        return 2
    args = [a for a in argv[1:] if a != "--print-command"]
    path, tried = find_tune()
    cmd = tune_command(args, path or "fa4-tune")
    if len(args) != len(argv) - 1:
        print(" ".join(cmd))
        return 0
    if path is None:
        print("python -m fa4 tune: fa4-tune not found; tried:\n%s\nSet FA4_TUNE to its path." % "\n".join(
            "  %s: %s" % t for t in tried), file=sys.stderr)
        return 127
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
