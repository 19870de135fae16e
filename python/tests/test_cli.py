"""python -m fa4: info, and tune forwarding to fa4-tune.  No GPU, no PyTorch."""
import subprocess
import sys

import _util
from fa4 import __main__ as cli


def _run(*args):
    return subprocess.run([sys.executable, "-m", "fa4"] + list(args), capture_output=True, text=True,
                          env=_util.tool_env())


def test_tune_shapes_become_fa4_tune_options():
    cmd = cli.tune_command(["--q", "4,4096,32,128", "--k", "4,8192,8,128", "--causal", "--time-budget", "60"],
                           "fa4-tune")
    assert cmd == ["fa4-tune", "tune", "--batch", "4", "--seqlen-q", "4096", "--heads-q", "32",
                   "--head-dim", "128", "--seqlen-k", "8192", "--heads-kv", "8", "--causal",
                   "--time-budget", "60"], cmd
    cmd = cli.tune_command(["--q", "1,1,64,128", "--v", "1,4096,8,64"], "t")
    assert cmd == ["t", "tune", "--batch", "1", "--seqlen-q", "1", "--heads-q", "64", "--head-dim", "128",
                   "--head-dim-v", "64"], cmd
    assert cli.tune_command(["show", "--table", "winners"], "t") == ["t", "show", "--table", "winners"]


def test_tune_softcap_and_sinks_pass_through():
    """fa4.attention's softcap= and sinks= are fa4-tune's --softcap X and --sinks."""
    cmd = cli.tune_command(["--q", "1,1,64,64", "--k", "1,8192,8,64", "--sinks", "--softcap", "30"], "t")
    assert cmd == ["t", "tune", "--batch", "1", "--seqlen-q", "1", "--heads-q", "64", "--head-dim", "64",
                   "--seqlen-k", "8192", "--heads-kv", "8", "--sinks", "--softcap", "30"], cmd


def test_tune_print_command():
    r = _run("tune", "--q", "2,1024,16,64", "--causal", "--print-command")
    assert r.returncode == 0, r.stderr
    words = r.stdout.split()
    assert words[0].endswith("fa4-tune") and words[1:] == [
        "tune", "--batch", "2", "--seqlen-q", "1024", "--heads-q", "16", "--head-dim", "64", "--causal"], words


def test_tune_runs_fa4_tune():
    path, tried = cli.find_tune()
    if path is None:
        _util.skip("no fa4-tune: %s" % tried)
    r = _run("tune", "--version")
    assert r.returncode == 0 and r.stdout.startswith("fa4-tune "), r.stdout + r.stderr


def test_info():
    r = _run("info")
    assert r.returncode == 0 and r.stdout.startswith("libfa4 "), r.stdout + r.stderr
