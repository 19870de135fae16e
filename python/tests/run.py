#!/usr/bin/env python3
"""Run the fa4 package's tests: with pytest when it imports, else with a small
runner of its own (test_*.py files, test_* functions, unittest.SkipTest for a
skip), so that a machine with PyTorch and a GPU but no pytest runs them too.

    python3 python/tests/run.py [-k TEXT] [--tap] [--no-pytest] [FILE...]

--tap writes TAP (one line per test, skips as "# SKIP") to stdout and every
other output to stderr: the form `make check` reads (tests/test_python.sh).
-k keeps the tests whose "file::name" contains TEXT.  The exit status is 1 when
a test failed.  $FA4_TEST_INSTALLED=1 tests an installed fa4 instead of the
package of this tree.
"""
import argparse
import glob
import importlib
import os
import sys
import time
import traceback
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True      # keep the source tree clean (make distcheck, read-only trees)


class Report:
    """Counts results and prints them as TAP or as a line each."""

    def __init__(self, tap, out):
        self.tap, self.out = tap, out
        self.n = self.failed = self.skipped = 0

    def result(self, name, outcome, why="", seconds=0.0):
        self.n += 1
        if outcome == "fail":
            self.failed += 1
        if outcome == "skip":
            self.skipped += 1
        if self.tap:
            line = "%s %d - %s" % ("not ok" if outcome == "fail" else "ok", self.n, name)
            if outcome == "skip":
                line += " # SKIP " + " ".join(str(why).split())
        else:
            line = "%-4s %s%s" % (outcome.upper() if outcome != "pass" else "ok", name,
                                  " (%s)" % " ".join(str(why).split()) if outcome == "skip" else
                                  " (%.1f s)" % seconds if seconds >= 1 else "")
        self.out.write(line + "\n")
        self.out.flush()

    def finish(self):
        if self.tap:
            self.out.write("1..%d\n" % self.n)
        else:
            self.out.write("%d passed, %d failed, %d skipped\n" % (
                self.n - self.failed - self.skipped, self.failed, self.skipped))
        self.out.flush()
        return 1 if self.failed or not self.n else 0


def own_runner(files, keyword, report):
    """Import each file and call its test_* functions in order."""
    sys.path.insert(0, HERE)
    for path in files:
        modname = os.path.splitext(os.path.basename(path))[0]
        try:
            mod = importlib.import_module(modname)
        except Exception:  # noqa: BLE001  (a module that does not import is a failure)
            traceback.print_exc()
            report.result("%s (import)" % os.path.basename(path), "fail")
            continue
        for name, fn in list(vars(mod).items()):
            full = "%s::%s" % (os.path.basename(path), name)
            if not name.startswith("test_") or not callable(fn) or (keyword and keyword not in full):
                continue
            t0 = time.time()
            try:
                fn()
            except unittest.SkipTest as e:
                report.result(full, "skip", e)
            except Exception:  # noqa: BLE001
                sys.stderr.write("FAILED %s\n" % full)
                traceback.print_exc()
                report.result(full, "fail")
            else:
                report.result(full, "pass", seconds=time.time() - t0)


class TapPlugin:
    """pytest plugin: one Report line per test item (its worst phase counts)."""

    def __init__(self, report):
        self.report = report
        self.phases = {}

    def pytest_runtest_logreport(self, report):
        self.phases.setdefault(report.nodeid, []).append(report)

    def pytest_runtest_logfinish(self, nodeid, location):
        reps = self.phases.pop(nodeid, [])
        name = nodeid.split("/")[-1]
        if any(r.failed for r in reps):
            self.report.result(name, "fail")
        elif any(r.skipped for r in reps):
            r = next(r for r in reps if r.skipped)
            why = r.longrepr[2] if isinstance(r.longrepr, tuple) else str(r.longrepr)
            self.report.result(name, "skip", why.replace("Skipped: ", ""))
        else:
            self.report.result(name, "pass", seconds=sum(r.duration for r in reps))

    def pytest_collectreport(self, report):
        if report.failed:
            self.report.result("%s (collect)" % report.nodeid, "fail")


def pytest_runner(files, keyword, report):
    import pytest
    args = ["-p", "no:cacheprovider", "-q", "-rs", "--rootdir", os.path.dirname(HERE)] + files
    if keyword:
        args += ["-k", keyword]
    code = pytest.main(args, plugins=[TapPlugin(report)])
    if code not in (0, 1, 5):     # 5: nothing collected; 2-4: interrupted, internal or usage error
        report.result("pytest exit status %d" % code, "fail")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("-k", dest="keyword")
    ap.add_argument("--tap", action="store_true")
    ap.add_argument("--no-pytest", action="store_true")
    args = ap.parse_args(argv)
    files = [os.path.abspath(f) for f in args.files] or sorted(glob.glob(os.path.join(HERE, "test_*.py")))
    out = sys.stdout
    if args.tap:
        # TAP alone on the real stdout; pytest's and the tests' output to stderr.
        out = os.fdopen(os.dup(1), "w")
        sys.stdout.flush()
        os.dup2(2, 1)
    report = Report(args.tap, out)
    use_pytest = not args.no_pytest
    if use_pytest:
        try:
            import pytest  # noqa: F401
        except ImportError:
            use_pytest = False
    sys.stderr.write("run.py: %s, Python %s\n" % ("pytest" if use_pytest else "own runner (no pytest)",
                                                   sys.version.split()[0]))
    (pytest_runner if use_pytest else own_runner)(files, args.keyword, report)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
