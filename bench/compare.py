#!/usr/bin/env python3
"""Prefill side by side, one process, same inputs: libfa4 (through ctypes) against cuDNN
and FlashAttention-2 (PyTorch SDPA with that backend forced; FA2 also through the
flash_attn package if it imports), FlashAttention-4 CuTe (flash_attn.cute, else the
sm90 AOT kernels of ../shared/peers, where they import and cover the shape) and
FlashInfer (single_prefill_with_kv_cache, fa2 and fa3 backends, on the rows of one
sequence; head dims other than its prebuilt d128 only with --flashinfer-jit, since
they compile with nvcc for minutes at first use).

Timing, the same for every library (ANCHORS.md, "Timing fairly"): CALLS calls back to
back between two CUDA events after a warm-up, median over REPS such groups, the
libraries' groups interleaved round by round in an order shuffled each round, so clock
drift hits them alike and none always follows the same library; sdpa_kernel
is entered once around each group, outside the events.  --graphs times one CUDA-graph
replay of the CALLS calls instead.  cuDNN and FA2 run on strided [b, h, s, d] views of
the BSHD inputs and on contiguous copies; the faster layout counts.

Each row: TFLOP/s per library, libfa4's ratio to the best peer on that row, and each
output's relative error against a float64 reference on sampled heads and query rows
(a MISMATCH above --tol).  The dense bf16 matmul ceiling (cuBLAS, 8192^3) is timed the
same way at the start and the end.  Convention (FlashAttention papers): 16,384 tokens
per batch, hidden 2048, FLOPs = 4 * batch * heads * seqlen^2 * head_dim, halved for
causal.

    python3 bench/compare.py [--lib build/.libs/libfa4.so] [--db PATH] [--dims 64,128,256]
        [--seqlens 512,1024,...] [--causal 0,1] [--gqa] [--reps 20] [--calls 10]
        [--graphs] [--json out.json] [--no-fa2] [--no-fa4-cute] [--no-flashinfer]
        [--flashinfer-jit]
    python3 bench/chart.py out.json -o perf.png
"""
import argparse
import contextlib
import ctypes as C
import datetime
import json
import math
import os
import random
import statistics
import sys
import time

try:
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
except ImportError as _e:  # --help works without torch; main() says what is missing
    torch = None
    TORCH_ERROR = _e


# The C API's structs, prototypes and errors come from the fa4 package of this tree
# (python/fa4: one ctypes description of the ABI, checked against lib/fa4.h by
# `make check`); it is imported from the tree, no installation needed.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from fa4 import _abi, _lib  # noqa: E402


class Fa4:
    """libfa4 at PATH on device 0 (the database DB, or none: heuristic configs), with
    the plan and launch calls this script and serving_compare.py make.  Plans are
    plain handles, released with fa4.lib.fa4_plan_destroy(plan)."""

    def __init__(self, path, db=None):
        self.lib = _lib.Library(path)
        self.context = _lib.Context(0, lib=self.lib, db_path=db, no_database=not db)
        self.ctx = self.context.handle

    def plan(self, b, sq, sk, hq, hkv, d, causal, config=None, varlen=0, page_size=0, num_pages=0):
        """(plan handle, config text, config source) for a bf16 problem; raises
        fa4.Fa4Error (a RuntimeError) with the library's message."""
        p = _abi.Problem.init(batch=b, seqlen_q=sq, seqlen_k=sk, heads_q=hq, heads_kv=hkv, head_dim_qk=d,
                              head_dim_v=d, causal=int(causal), varlen=varlen, page_size=page_size,
                              num_pages=num_pages)
        plan = self.context.plan(p, config=config)
        desc, src = plan.describe()
        return plan.handle, desc, src

    def forward(self, plan, q, k, v, o, cu_q=None, cu_k=None, table=None, used=None):
        ptr = lambda t: t.data_ptr() if t is not None else None
        t = _abi.Tensors.init(q=q.data_ptr(), k=k.data_ptr(), v=v.data_ptr(), o=o.data_ptr(), cu_seqlens_q=ptr(cu_q),
                              cu_seqlens_k=ptr(cu_k), block_table=ptr(table), seqused_k=ptr(used))
        st = self.lib.fa4_forward(plan, C.addressof(t), torch.cuda.current_stream().cuda_stream)
        if st:
            raise self.context.error("fa4_forward", st)


# ------------------------------------------------------------------------------ timing

SPIN_CYCLES = 200_000   # about 0.1 ms at H100 clocks


def _spin():
    """Keep the GPU busy for about 0.1 ms ahead of a start event: the calls after it are
    queued meanwhile, so no library's host dispatch of its first call (tens of
    microseconds through SDPA, a few through ctypes) falls inside its event pair."""
    sleep = getattr(torch.cuda, "_sleep", None)
    if sleep is not None:
        sleep(SPIN_CYCLES)


def prepare(fn, calls, warmup=3, ctx=contextlib.nullcontext, graphs=False):
    """Warm FN up and return a function that runs one group of CALLS calls: the calls
    themselves, or the replay of a CUDA graph that captured them (GRAPHS)."""
    if not graphs:
        with ctx():
            for _ in range(warmup):
                fn()

        def group():
            for _ in range(calls):
                fn()
        return group
    # torch.cuda.graph wants the warm-up on a side stream (lazy library set-up).
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), ctx():
        for _ in range(warmup):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with ctx(), torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    return graph.replay


class SmClock:
    """The SM clock in MHz through NVML (ctypes; None where the library is missing),
    polled while a timed group runs: back-to-back groups run at whatever clock the
    power limit leaves, and two libraries can run at different ones."""

    def __init__(self):
        self.nvml, self.handle = None, C.c_void_p()
        try:
            nvml = C.CDLL("libnvidia-ml.so.1")
            if nvml.nvmlInit_v2() == 0 and nvml.nvmlDeviceGetHandleByIndex_v2(
                    torch.cuda.current_device(), C.byref(self.handle)) == 0:
                self.nvml = nvml
        except OSError:
            pass

    def mhz(self):
        clk = C.c_uint(0)
        if self.nvml is None or self.nvml.nvmlDeviceGetClockInfo(self.handle, 1, C.byref(clk)):
            return None                                 # 1: NVML_CLOCK_SM
        return clk.value


_SM_CLOCK = None


def time_groups(group_fns, calls, reps, ctxs=None, clocks=None):
    """Median milliseconds per call of each group function over REPS rounds.  Each round
    times one group of every function, in an order shuffled afresh each round (a fixed
    seed, so runs repeat), so that clock and temperature drift fall on all of them alike
    and no function always runs after the same one.  In a fixed cyclic order FA4-CuTe
    always followed FA2, whose long 16k groups leave the GPU cooler, and read 5% faster
    at d64 non-causal 16k than when shuffled (bench/NOTES.md, twenty-ninth session).
    CLOCKS, a list, receives each function's median over its groups of the mean SM
    clock (MHz) polled while the group ran (groups too short for two samples count no
    clock)."""
    global _SM_CLOCK
    _SM_CLOCK = _SM_CLOCK or SmClock()
    n = len(group_fns)
    ctxs = ctxs or [contextlib.nullcontext] * n
    times, mhz = [[] for _ in range(n)], [[] for _ in range(n)]
    order, rng = list(range(n)), random.Random(n * 1000 + reps)
    torch.cuda.synchronize()
    for r in range(reps):
        rng.shuffle(order)
        for i in order:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            with ctxs[i]():                    # sdpa_kernel: entered outside the events
                _spin()
                start.record()
                group_fns[i]()
                end.record()
            samples = []                        # the clock while the group runs
            while not end.query():
                clk = _SM_CLOCK.mhz()
                if clk is None:
                    break
                samples.append(clk)
                time.sleep(0.0005)
            if len(samples) >= 2:               # the last one may be after the end
                mhz[i].append(statistics.mean(samples[:-1]))
            end.synchronize()
            times[i].append(start.elapsed_time(end) / calls)
    if clocks is not None:
        clocks[:] = [statistics.median(m) if m else None for m in mhz]
    return [statistics.median(t) for t in times]


def bench_back_to_back(fn, groups=15, calls=10, warmup=3, graphs=False):
    """Median milliseconds per call over GROUPS groups of CALLS calls between two events:
    host dispatch hides behind the GPU, as in a pipelined application."""
    return time_groups([prepare(fn, calls, warmup, graphs=graphs)], calls, groups)[0]


def gemm_ceiling(n, calls, reps, graphs):
    """(TFLOP/s, ms) of an n x n x n bf16 matrix product through cuBLAS, timed like the
    attention rows: the tensor-core bar of this machine in this state."""
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    ms = bench_back_to_back(lambda: torch.matmul(a, b, out=c), reps, calls, graphs=graphs)
    return 2.0 * n ** 3 / ms / 1e9, ms


# --------------------------------------------------------------------------- checking

def reference_sample(q, k, v, causal, rows=256):
    """float64 attention at a sample of the output: ROWS query rows spread over the
    sequence (first and last included) of (batch 0, head 0) and (last batch, last head),
    against all keys.  The full float32 reference would not fit at 16k."""
    b, s, hq, d = q.shape
    sk, group = k.shape[1], hq // k.shape[2]
    idx = torch.linspace(0, s - 1, min(rows, s), device=q.device).round().long().unique()
    picks = sorted({(0, 0), (b - 1, hq - 1)})
    ref = []
    for bi, hi in picks:
        qs = q[bi, idx, hi].double()
        ks, vs = k[bi, :, hi // group].double(), v[bi, :, hi // group].double()
        scores = qs @ ks.T / math.sqrt(d)
        if causal:   # bottom-right aligned, as libfa4 and FlashAttention (sq == sk here)
            keys = torch.arange(sk, device=q.device)
            scores.masked_fill_(keys[None, :] > idx[:, None] + (sk - s), float("-inf"))
        ref.append(torch.softmax(scores, dim=-1) @ vs)
    return idx, picks, torch.stack(ref)


def sample_error(out, sample):
    """Relative Frobenius error of OUT ([b, s, h, d]) at the reference's sample; inf when
    it holds NaN or Inf."""
    idx, picks, ref = sample
    got = torch.stack([out[bi, idx, hi].double() for bi, hi in picks])
    err = ((got - ref).norm() / ref.norm()).item()
    return err if math.isfinite(err) else float("inf")


# -------------------------------------------------------------------------- libraries

PEERS = ("cuDNN", "FA2", "FA4-CuTe", "FlashInfer")
FA4_AOT_DIR = os.environ.get("FA4_AOT_DIR", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "peers", "fa4_sm90_aot"))


class NotCovered(Exception):
    """The library has no kernel for this shape: a missing entry, not a failure."""


class Candidate:
    """One way to call a library on a row: fn() runs it and returns its output, bshd()
    turns that into [b, s, h, d], ctx() is entered around its calls (sdpa_kernel)."""

    def __init__(self, variant, fn, bshd=lambda r: r, ctx=contextlib.nullcontext):
        self.variant, self.fn, self.bshd, self.ctx = variant, fn, bshd, ctx


def libfa4_candidates(fa4, plan, q, k, v, o):
    def run():
        fa4.forward(plan, q, k, v, o)
        return o
    return [Candidate("", run)]


def sdpa_candidates(backend, q, k, v, causal):
    """SDPA on strided [b, h, s, d] views of the BSHD inputs and on contiguous copies:
    the faster of the two is the bar."""
    gqa = q.shape[2] != k.shape[2]
    views = [x.transpose(1, 2) for x in (q, k, v)]
    copies = [x.contiguous() for x in views]

    def call(qt, kt, vt):
        return lambda: F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal, enable_gqa=gqa)
    ctx = lambda: sdpa_kernel([backend])
    back = lambda r: r.transpose(1, 2)
    return [Candidate("strided", call(*views), back, ctx), Candidate("contiguous", call(*copies), back, ctx)]


def load_fa2_package():
    """(flash_attn_func, description) of FlashAttention-2's own package, or (None, why).
    FA4's package is also called flash_attn: only a 2.x version counts."""
    try:
        import flash_attn
        from flash_attn import flash_attn_func
    except Exception as e:  # noqa: BLE001  (any import failure means: not here)
        return None, "flash_attn: %s" % first_line(e)
    ver = str(getattr(flash_attn, "__version__", "?"))
    if not ver.startswith("2."):
        return None, "flash_attn %s is not FlashAttention-2" % ver
    return flash_attn_func, "flash_attn %s" % ver


def load_fa4_cute():
    """(flash_attn_func, description) of FlashAttention-4 CuTe: the flash_attn.cute
    package if it imports, else the AOT-compiled sm90 kernels of ../shared/peers
    ($FA4_AOT_DIR); (None, why) when neither does."""
    why = []
    try:
        from flash_attn.cute import flash_attn_func
        return flash_attn_func, "flash_attn.cute"
    except Exception as e:  # noqa: BLE001
        why.append("flash_attn.cute: %s" % first_line(e))
    if not os.path.isdir(FA4_AOT_DIR):
        why.append("no %s (../shared is not on this machine? set FA4_AOT_DIR)" % os.path.normpath(FA4_AOT_DIR))
        return None, "; ".join(why)
    try:
        if FA4_AOT_DIR not in sys.path:
            sys.path.insert(0, FA4_AOT_DIR)
        import fa4_aot
        return fa4_aot.flash_attn_func, "fa4_aot %s" % fa4_aot.__version__
    except Exception as e:  # noqa: BLE001
        hint = " (bash ../shared/peers/install.sh; export PYTHONPATH=/tmp/peers-site)" \
            if "tvm_ffi" in str(e) else ""
        why.append("fa4_aot: %s%s" % (first_line(e), hint))
    return None, "; ".join(why)


def load_flashinfer(args):
    """(build, description) of FlashInfer's single-sequence prefill, or (None, why).
    Batched rows are not covered: its batched prefill is not prebuilt, and one call per
    sequence would charge it launches that no application makes."""
    try:
        import flashinfer
    except Exception as e:  # noqa: BLE001
        return None, "flashinfer: %s (bash ../shared/peers/install.sh; export PYTHONPATH=/tmp/peers-site)" \
            % first_line(e)
    if "CUDA_HOME" not in os.environ and os.path.exists("/usr/local/cuda/bin/nvcc"):
        os.environ["CUDA_HOME"] = "/usr/local/cuda"      # its JIT, when allowed

    def build(q, k, v, causal):
        if q.shape[0] != 1:
            raise NotCovered("FlashInfer: single_prefill takes one sequence (batch %d)" % q.shape[0])
        if q.shape[3] != 128 and not args.flashinfer_jit:
            raise NotCovered("FlashInfer: d%d is not prebuilt (--flashinfer-jit compiles it)" % q.shape[3])
        one = lambda be: lambda: flashinfer.single_prefill_with_kv_cache(q[0], k[0], v[0], causal=causal,
                                                                         backend=be)
        return [Candidate(be, one(be), lambda r: r.unsqueeze(0)) for be in ("fa2", "fa3")]
    return build, "flashinfer %s single_prefill_with_kv_cache (fa2, fa3 backends)" % flashinfer.__version__


def load_peers(args):
    """name -> (build, description): build(q, k, v, causal) returns the candidates of
    that peer on a row (or raises NotCovered); build is None where the peer is missing,
    and the description then says why."""
    peers = {"cuDNN": (lambda q, k, v, c: sdpa_candidates(SDPBackend.CUDNN_ATTENTION, q, k, v, c),
                       "SDPA cuDNN backend (cuDNN %s)" % torch.backends.cudnn.version())}
    if args.no_fa2:
        peers["FA2"] = (None, "off (--no-fa2)")
    else:
        pkg, desc = load_fa2_package()

        def fa2(q, k, v, causal):
            cands = sdpa_candidates(SDPBackend.FLASH_ATTENTION, q, k, v, causal)
            if pkg is not None:
                cands.append(Candidate("flash_attn", lambda: pkg(q, k, v, causal=causal)))
            return cands
        peers["FA2"] = (fa2, "SDPA flash backend" + (" and " + desc if pkg else ""))
    if args.no_fa4_cute:
        peers["FA4-CuTe"] = (None, "off (--no-fa4-cute)")
    else:
        func, desc = load_fa4_cute()
        first = lambda r: r[0] if isinstance(r, tuple) else r    # (out, lse)
        peers["FA4-CuTe"] = ((lambda q, k, v, c: [Candidate("", lambda: func(q, k, v, causal=c), first)])
                             if func else None, desc)
    peers["FlashInfer"] = (None, "off (--no-flashinfer)") if args.no_flashinfer else load_flashinfer(args)
    return peers


def first_line(e, limit=160):
    text = (str(e).strip().splitlines() or [type(e).__name__])[0]
    return text if len(text) <= limit else text[:limit] + "..."


def failure(errors):
    """A library's status on a row where none of its candidates ran."""
    covered = [e for e in errors if not (isinstance(e, (NotCovered, NotImplementedError))
                                         or "No available kernel" in str(e))]
    return dict(status="error" if covered else "not covered",
                why="; ".join(sorted({first_line(e) for e in errors})))


# ------------------------------------------------------------------------------- rows

def cases(args):
    """(batch, seqlen, heads_q, heads_kv, head_dim, causal): the FlashAttention grid
    (16k tokens, hidden 2048), then the GQA rows."""
    out = []
    for d in (map(int, args.dims.split(",")) if args.dims else ()):
        for causal in map(int, args.causal.split(",")):
            for s in map(int, args.seqlens.split(",")):
                out.append((max(1, 16384 // s), s, 2048 // d, 2048 // d, d, bool(causal)))
    if args.gqa:
        for s in (4096, 16384):
            for causal in (False, True):
                out.append((max(1, 16384 // s), s, 32, 8, 128, causal))
    for text in args.row:
        b, s, h, d, causal = text.split(":")
        hq, hkv = (h.split("/") + [h])[:2]
        out.append((int(b), int(s), int(hq), int(hkv), int(d), causal == "1"))
    return out


def run_row(args, fa4, peers, case):
    """Check, then time, every library on one shape; the row as written to JSON."""
    b, s, hq, hkv, d, causal = case
    flops = 4.0 * b * hq * s * s * d / (2 if causal else 1)
    row = dict(head_dim=d, head_dim_qk=d, head_dim_v=d, causal=causal, seqlen=s, batch=b,
               heads_q=hq, heads_kv=hkv, gflop=flops / 1e9, libs={})
    q = torch.randn(b, s, hq, d, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(b, s, hkv, d, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(b, s, hkv, d, device="cuda", dtype=torch.bfloat16)
    o = torch.full_like(q, float("nan"))     # rows libfa4 leaves unwritten show as NaN
    sample = reference_sample(q, k, v, causal)

    cands, plan = {}, None
    try:
        plan, desc, src = fa4.plan(b, s, s, hq, hkv, d, causal)
        row["config"], row["config_source"] = desc, src
        cands["libfa4"] = libfa4_candidates(fa4, plan, q, k, v, o)
    except RuntimeError as e:
        row["libs"]["libfa4"] = dict(status="error", why=first_line(e))
    for name, (build, why) in peers.items():
        if build is None:
            row["libs"][name] = dict(status="unavailable", why=why)
            continue
        try:
            cands[name] = build(q, k, v, causal)
        except NotCovered as e:
            row["libs"][name] = failure([e])

    # Each candidate: one call checked against the reference, then the warm-up (and
    # the graph capture); only those that got through are timed.
    timed, errs = [], {}
    for name, cs in cands.items():
        errors = []
        for c in cs:
            try:
                with c.ctx():
                    out = c.bshd(c.fn())
                torch.cuda.synchronize()
                err = sample_error(out, sample)
                del out
            except Exception as e:  # noqa: BLE001  (a peer's failure is its cell, not the run's)
                errors.append(e)
                continue
            try:
                group = prepare(c.fn, args.calls, ctx=c.ctx, graphs=args.graphs)
            except Exception as e:  # noqa: BLE001
                errors.append(RuntimeError("%s: %s" % ("graph capture" if args.graphs else "warm-up",
                                                       first_line(e))))
                continue
            errs.setdefault(name, []).append(err)
            timed.append((name, c, group))
        if name not in errs:
            row["libs"][name] = failure(errors)

    clocks = []
    ms = time_groups([g for _, _, g in timed], args.calls, args.reps, [c.ctx for _, c, _ in timed],
                     clocks) if timed else []
    for (name, c, _), t, mhz in zip(timed, ms, clocks):
        lib = row["libs"].setdefault(name, dict(variants={}))
        lib["variants"][c.variant or "default"] = t
        if "ms" not in lib or t < lib["ms"]:
            lib.update(ms=t, tflops=flops / t / 1e9, variant=c.variant, sm_mhz=mhz)
    for name, e in errs.items():
        worst = max(e)
        row["libs"][name].update(rel_err=worst if math.isfinite(worst) else None,
                                 status="ok" if worst <= args.tol else "mismatch")

    peer_ms = {n: row["libs"][n]["ms"] for n in PEERS if "ms" in row["libs"].get(n, {})}
    if "ms" in row["libs"].get("libfa4", {}) and peer_ms:
        best = min(peer_ms, key=peer_ms.get)
        row["best_peer"], row["ratio_best"] = best, peer_ms[best] / row["libs"]["libfa4"]["ms"]
    row["mismatch"] = [n for n, lib in row["libs"].items() if lib.get("status") == "mismatch"]

    del timed, cands              # graphs hold the plan's kernel: release them first
    torch.cuda.synchronize()
    if plan is not None:
        fa4.lib.fa4_plan_destroy(plan)
    if args.graphs:
        torch.cuda.empty_cache()
    return row


COLUMNS = ("libfa4",) + PEERS
CELL = {"unavailable": "-", "not covered": "n/c", "error": "err"}


def header():
    return "%-4s %-6s %6s %5s %7s | %8s %8s %8s %8s %10s | %-18s | %s" % (
        "d", "causal", "seqlen", "batch", "hq/hkv", "libfa4", "cuDNN", "FA2", "FA4-CuTe", "FlashInfer",
        "vs best peer", "rel.err  config (source)")


def format_row(row):
    cells = []
    for name in COLUMNS:
        lib, width = row["libs"].get(name, {}), max(8, len(name))
        cells.append("%*.1f" % (width, lib["tflops"]) if "tflops" in lib
                     else "%*s" % (width, CELL.get(lib.get("status"), "-")))
    ratio = "%5.2fx %-11s" % (row["ratio_best"], row["best_peer"]) if "ratio_best" in row else "%-18s" % "-"
    fa4 = row["libs"].get("libfa4", {})
    err = fa4.get("rel_err")
    note = "%.1e" % err if err is not None else ("inf" if "ms" in fa4 else fa4.get("why", "-"))
    if "config" in row:
        note += "  %s (%s)" % (row["config"], row["config_source"])
    for name in row["mismatch"]:
        e = row["libs"][name].get("rel_err")
        note += "  MISMATCH %s %s" % (name, "%.1e" % e if e is not None else "non-finite")
    return "%-4d %-6s %6d %5d %3d/%-3d | %s | %s | %s" % (
        row["head_dim"], "yes" if row["causal"] else "no", row["seqlen"], row["batch"],
        row["heads_q"], row["heads_kv"], " ".join(cells), ratio, note)


def shape_name(row):
    return "d%d%s %s %d" % (row["head_dim"], "" if row["heads_q"] == row["heads_kv"] else
                            " %d/%d" % (row["heads_q"], row["heads_kv"]),
                            "causal" if row["causal"] else "non-causal", row["seqlen"])


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def summarize(rows):
    """Geomean of libfa4's ratio to the best peer, rows at or above 1.0x, the same
    against each peer, and the rows where libfa4 is behind."""
    ratios = [r["ratio_best"] for r in rows if "ratio_best" in r]
    out = dict(rows=len(ratios), geomean_best=geomean(ratios),
               rows_at_or_above_1=sum(1 for x in ratios if x >= 1.0),
               behind=[dict(shape=shape_name(r), ratio=r["ratio_best"], peer=r["best_peer"],
                            mhz=r["libs"]["libfa4"].get("sm_mhz"),
                            peer_mhz=r["libs"][r["best_peer"]].get("sm_mhz"))
                       for r in rows if r.get("ratio_best", 1.0) < 1.0],
               per_peer={})
    for name in PEERS:
        xs = [r["libs"][name]["ms"] / r["libs"]["libfa4"]["ms"] for r in rows
              if "ms" in r["libs"].get(name, {}) and "ms" in r["libs"].get("libfa4", {})]
        if xs:
            out["per_peer"][name] = dict(geomean=geomean(xs), rows=len(xs),
                                         rows_at_or_above_1=sum(1 for x in xs if x >= 1.0))
        # Work per clock: the time ratio with each side's SM clock multiplied in.
        pc = [r["libs"][name]["ms"] * r["libs"][name]["sm_mhz"] /
              (r["libs"]["libfa4"]["ms"] * r["libs"]["libfa4"]["sm_mhz"]) for r in rows
              if r["libs"].get(name, {}).get("sm_mhz") and r["libs"].get("libfa4", {}).get("sm_mhz")]
        if pc:
            out["per_peer"][name]["geomean_per_clock"] = geomean(pc)
    out["libfa4_mismatch"] = [shape_name(r) for r in rows if "libfa4" in r["mismatch"]]
    return out


def print_summary(summary, meta):
    if not summary["rows"]:
        print("no row with libfa4 and a peer timed")
    else:
        print("geomean libfa4 / best peer: %.3f over %d rows; libfa4 >= 1.0x on %d of %d" % (
            summary["geomean_best"], summary["rows"], summary["rows_at_or_above_1"], summary["rows"]))
        for name, p in summary["per_peer"].items():
            print("  vs %-8s geomean %.3f, >= 1.0x on %d of %d%s" % (
                name, p["geomean"], p["rows_at_or_above_1"], p["rows"],
                "; per SM clock %.3f" % p["geomean_per_clock"] if "geomean_per_clock" in p else ""))
        for b in summary["behind"]:
            print("  behind: %-28s %.3fx (%s)%s" % (
                b["shape"], b["ratio"], b["peer"],
                "  SM clock %.0f / %.0f MHz" % (b["mhz"], b["peer_mhz"])
                if b.get("mhz") and b.get("peer_mhz") else ""))
    if summary["libfa4_mismatch"]:
        print("libfa4 MISMATCH on: %s" % ", ".join(summary["libfa4_mismatch"]))
    g = meta.get("gemm")
    if g:
        print("bf16 matmul %d^3: %.1f TFLOP/s at the start, %s at the end" % (
            g["n"], g["tflops"], "%.1f" % g["tflops_end"] if g.get("tflops_end") else "-"))


def write_json(path, meta, rows):
    """All rows so far, with the machine, the method and the summary; written through a
    temporary file so that a run cut short leaves a readable file."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(dict(meta, rows=rows, summary=summarize(rows)), f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def git_commit():
    try:
        import subprocess
        return subprocess.run(["git", "describe", "--always", "--dirty", "--abbrev=7"],
                              cwd=os.path.dirname(os.path.abspath(__file__)),
                              capture_output=True, text=True, timeout=10).stdout.strip() or None
    except Exception:  # noqa: BLE001  (the GPU machine's copy may have no .git)
        return None


def machine_meta(args, peers):
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return dict(
        schema="libfa4-compare/1",
        timestamp=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        device=props.name, sm_count=props.multi_processor_count,
        torch=torch.__version__, cuda=torch.version.cuda, cudnn=torch.backends.cudnn.version(),
        libfa4=os.path.abspath(args.lib), db=args.db, commit=git_commit(),
        method=dict(timing="cuda-graphs" if args.graphs else "back-to-back", calls_per_group=args.calls,
                    groups=args.reps, warmup=3, statistic="median", interleaved="shuffled each round",
                    sdpa_layouts="faster of strided BSHD views and contiguous BHSD copies"),
        tolerance=args.tol,
        peers={name: dict(available=build is not None, about=why) for name, (build, why) in peers.items()})


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description="libfa4 prefill against cuDNN, FA2, FA4-CuTe and FlashInfer, timed alike.")
    ap.add_argument("--lib", default=os.path.join(os.path.dirname(__file__), "..", "build", ".libs", "libfa4.so"))
    ap.add_argument("--db", default=None, help="config database (default: none, heuristic configs)")
    ap.add_argument("--dims", default="64,128,256", help="head dims of the grid (\"\": none, --row only)")
    ap.add_argument("--seqlens", default="512,1024,2048,4096,8192,16384")
    ap.add_argument("--causal", default="0,1")
    ap.add_argument("--reps", type=int, default=20, help="timed groups per library and row (median)")
    ap.add_argument("--calls", type=int, default=10, help="calls back to back between two events")
    ap.add_argument("--graphs", action="store_true", help="time a CUDA graph of the calls instead")
    ap.add_argument("--gqa", action="store_true", help="also the GQA rows (32 q / 8 kv heads, d128, 4k and 16k)")
    ap.add_argument("--row", action="append", default=[], metavar="B:S:HQ[/HKV]:D:CAUSAL",
                    help="one more shape (repeatable), e.g. 1:16384:32/32:128:1")
    ap.add_argument("--no-fa2", action="store_true")
    ap.add_argument("--no-fa4-cute", action="store_true")
    ap.add_argument("--no-flashinfer", action="store_true")
    ap.add_argument("--flashinfer-jit", action="store_true",
                    help="let FlashInfer compile head dims it has no prebuilt kernel for (minutes each)")
    ap.add_argument("--tol", type=float, default=2e-2, help="relative error above which a row says MISMATCH")
    ap.add_argument("--gemm", type=int, default=8192, metavar="N", help="bf16 matmul ceiling N^3 (0: skip)")
    ap.add_argument("--json", metavar="PATH", help="write the rows, the ceiling and the machine here")
    args = ap.parse_args(argv)
    if args.reps < 1 or args.calls < 1:
        ap.error("--reps and --calls must be at least 1")
    try:
        for text in (args.dims, args.seqlens, args.causal):
            [int(x) for x in text.split(",") if text]
        for text in args.row:
            b, sq, h, d, causal = text.split(":")
            [int(x) for x in [b, sq, d, causal] + h.split("/")]
    except ValueError as e:
        ap.error("--dims, --seqlens and --causal are comma lists of integers, --row "
                 "B:S:HQ[/HKV]:D:CAUSAL: %s" % e)
    return args


def main(argv=None):
    args = parse_args(argv)
    if torch is None:
        sys.exit("compare.py needs PyTorch: %s" % TORCH_ERROR)
    if not torch.cuda.is_available():
        sys.exit("compare.py: no CUDA device")
    fa4 = Fa4(args.lib, args.db)
    torch.manual_seed(0)
    peers = load_peers(args)
    meta = machine_meta(args, peers)
    print("device: %s (%d SMs), torch %s, CUDA %s, cuDNN %s" % (
        meta["device"], meta["sm_count"], meta["torch"], meta["cuda"], meta["cudnn"]))
    print("timing: %s, %d calls per event pair, median of %d groups, libraries interleaved in a shuffled order" % (
        "CUDA graph replays" if args.graphs else "back to back", args.calls, args.reps))
    for name, (build, why) in peers.items():
        print("peer %-8s %s" % (name, why if build else "MISSING: " + why))
    if args.gemm:
        tf, ms = gemm_ceiling(args.gemm, args.calls, args.reps, args.graphs)
        meta["gemm"] = dict(n=args.gemm, dtype="bf16", tflops=tf, ms=ms)
        print("bf16 matmul %d^3 (cuBLAS): %.1f TFLOP/s (%.3f ms per call)" % (args.gemm, tf, ms), flush=True)
    rows = []
    if args.json:
        write_json(args.json, meta, rows)     # a bad path fails now, not after the run
    print(header())
    print("-" * len(header()), flush=True)
    for case in cases(args):
        try:
            row = run_row(args, fa4, peers, case)
        except (RuntimeError, torch.cuda.OutOfMemoryError) as e:
            print("%-4d %-6s %6d: %s" % (case[4], "yes" if case[5] else "no", case[1], first_line(e)), flush=True)
            continue
        rows.append(row)
        print(format_row(row), flush=True)
        if args.json:
            write_json(args.json, meta, rows)
    if args.gemm:
        tf, ms = gemm_ceiling(args.gemm, args.calls, args.reps, args.graphs)
        meta["gemm"].update(tflops_end=tf, ms_end=ms)
    summary = summarize(rows)
    print_summary(summary, meta)
    if args.json:
        write_json(args.json, meta, rows)
        print("wrote %s" % args.json)
    return 1 if summary["libfa4_mismatch"] else 0


if __name__ == "__main__":
    sys.exit(main())
