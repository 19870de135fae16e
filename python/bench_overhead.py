#!/usr/bin/env python3
"""Host time of fa4's Python calls over the raw C launch, for a cached plan.

For each shape, the host time per call of
  raw       fa4_forward() through ctypes with a prepared fa4_tensors (the floor),
  out=      fa4.attention(..., out=o) / attention_with_kvcache(..., out=o),
  alloc     the same without out= (PyTorch allocates the output),
  op        torch.ops.fa4.* (the custom op's dispatch: compile, autograd paths),
each the median over GROUPS groups of CALLS calls timed on the host
(perf_counter) and synchronised between groups, so that the GPU queue never
fills and the figure is the host's.  The overhead is out= minus raw,
measured in pairs: an out= group and a raw group back to back in each
round (order swapped every round), the median of the differences, since
separate medians drift by microseconds between runs on a shared host; the
target is OVERHEAD_TARGET_US.  Then the host time of the pieces a call is
made of (the capture query, the stream lookup, tensor attributes, ...), to
say where the overhead goes on this machine.  Needs PyTorch and a GPU.

    python3 python/bench_overhead.py [--calls 200] [--groups 30] [--json out.json]
"""
import argparse
import ctypes as C
import json
import os
import statistics
import sys
import time
import timeit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # this tree's fa4

OVERHEAD_TARGET_US = 10.0


def per_call_us(fn, calls, groups, torch):
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(groups):
        times.append(group_us(fn, calls, torch))
    return statistics.median(times)


def group_us(fn, calls, torch):
    """Host time per call of CALLS calls of FN, then a synchronisation."""
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / calls * 1e6


def paired_overhead_us(fn, raw, calls, groups, torch):
    """The median over GROUPS rounds of (FN's group - RAW's group), the two
    groups of a round back to back (order swapped each round): the host's
    clock and cache state, which drift by microseconds between separate
    medians, reach both alike."""
    for _ in range(10):
        fn()
        raw()
    torch.cuda.synchronize()
    diffs = []
    for g in range(groups):
        if g % 2:
            r = group_us(raw, calls, torch)
            f = group_us(fn, calls, torch)
        else:
            f = group_us(fn, calls, torch)
            r = group_us(raw, calls, torch)
        diffs.append(f - r)
    return statistics.median(diffs), min(diffs), max(diffs)


def raw_launch(fa4, entry, torch, **ptrs):
    """A function that launches ENTRY's plan through ctypes alone, with the
    pointers and sizes given: what fa4's wrappers add to is this."""
    from fa4 import _abi, _ops
    lib = fa4.library()
    dev = torch.cuda.current_device()
    stream = torch.cuda.current_stream().cuda_stream
    ws = _ops._workspace(entry, stream, torch.device("cuda", dev)) if entry.ws_bytes else None
    t = _abi.Tensors.init(workspace=None if ws is None else ws.data_ptr(), **ptrs)
    addr, handle, forward = C.addressof(t), entry.handle, lib.fa4_forward

    def run():
        if forward(handle, addr, stream):
            raise RuntimeError("fa4_forward failed")
    run.keep = (t, ws)
    return run


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--groups", type=int, default=30)
    ap.add_argument("--json")
    args = ap.parse_args()
    import torch
    import fa4
    from fa4 import _ops
    if not torch.cuda.is_available():
        sys.exit("bench_overhead.py: no CUDA device")
    torch.manual_seed(0)
    rows = []
    bf = dict(device="cuda", dtype=torch.bfloat16)
    print("device: %s, torch %s, libfa4 %s (%s)" % (torch.cuda.get_device_name(), torch.__version__,
                                                   fa4.library().version(), fa4.library().path))
    print("host time per call, median of %d groups of %d calls (us)" % (args.groups, args.calls))
    print("%-44s %8s %8s %8s %8s %9s %14s %10s" % ("shape", "raw", "out=", "alloc", "op", "overhead",
                                                  "(paired range)", "family/ws"))

    # Dense prefill (small: the host, not the GPU, is what is timed).
    for (b, s, hq, hkv, d, causal) in [(1, 128, 8, 8, 128, True), (4, 1024, 16, 4, 128, False)]:
        q = torch.randn(b, s, hq, d, **bf)
        k = torch.randn(b, s, hkv, d, **bf)
        v = torch.randn_like(k)
        o = torch.empty_like(q)
        e = _ops.dense(q, k, v, o, causal, -1, -1, 0.0, False, plan_only=True)
        raw = raw_launch(fa4, e, torch, q=q.data_ptr(), k=k.data_ptr(), v=v.data_ptr(), o=o.data_ptr(),
                         seqlen_q=s, seqlen_k=s, batch=b)
        cases = dict(raw=raw,
                     out=lambda: fa4.attention(q, k, v, causal=causal, out=o),
                     alloc=lambda: fa4.attention(q, k, v, causal=causal),
                     op=lambda: torch.ops.fa4.attention(q, k, v, causal, -1, -1, 0.0, False))
        rows.append(dict(shape="attention b%d s%d %d/%d d%d%s" % (b, s, hq, hkv, d, " causal" if causal else ""),
                         family=e.plan.family, workspace_bytes=e.ws_bytes,
                         **measure(cases, args, torch)))
        print_row(rows[-1])

    # FP8 dense prefill with descales (compute capability 8.x and 9.0): the descale pointers per call.
    f8 = getattr(torch, "float8_e4m3fn", None)
    if f8 is not None and torch.cuda.get_device_capability()[0] in (8, 9):
        b, s, hq, hkv, d = 1, 128, 8, 8, 128
        q, k, v = (torch.randn(b, s, h, d, device="cuda").to(f8) for h in (hq, hkv, hkv))
        ds = [torch.rand(b, hkv, device="cuda") + 0.5 for _ in range(3)]
        o = torch.empty(b, s, hq, d, **bf)
        fa4.attention(q, k, v, causal=True, out=o, q_descale=ds[0], k_descale=ds[1], v_descale=ds[2])
        e = _ops.dense(q, k, v, o, True, -1, -1, 0.0, False, plan_only=True)
        raw = raw_launch(fa4, e, torch, q=q.data_ptr(), k=k.data_ptr(), v=v.data_ptr(), o=o.data_ptr(),
                         q_descale=ds[0].data_ptr(), k_descale=ds[1].data_ptr(), v_descale=ds[2].data_ptr(),
                         seqlen_q=s, seqlen_k=s, batch=b)
        cases = dict(raw=raw,
                     out=lambda: fa4.attention(q, k, v, causal=True, out=o, q_descale=ds[0], k_descale=ds[1],
                                               v_descale=ds[2]),
                     alloc=lambda: fa4.attention(q, k, v, causal=True, q_descale=ds[0], k_descale=ds[1],
                                                 v_descale=ds[2]),
                     op=lambda: torch.ops.fa4.attention(q, k, v, True, -1, -1, 0.0, False, ds[0], ds[1], ds[2], 0))
        rows.append(dict(shape="attention fp8 b%d s%d %d/%d d%d causal" % (b, s, hq, hkv, d),
                         family=e.plan.family, workspace_bytes=e.ws_bytes,
                         **measure(cases, args, torch)))
        print_row(rows[-1])

    # Softcap and sinks (Gemma, gpt-oss): the sinks pointer per call.
    b, s, hq, hkv, d = 1, 128, 8, 8, 128
    q, k, v = (torch.randn(b, s, h, d, **bf) for h in (hq, hkv, hkv))
    sinks = torch.randn(hq, device="cuda")
    o = torch.empty_like(q)
    fa4.attention(q, k, v, causal=True, out=o, softcap=30.0, sinks=sinks)
    e = _ops.dense(q, k, v, o, True, -1, -1, 0.0, False, plan_only=True, mods=(30.0, sinks))
    raw = raw_launch(fa4, e, torch, q=q.data_ptr(), k=k.data_ptr(), v=v.data_ptr(), o=o.data_ptr(),
                     sinks=sinks.data_ptr(), seqlen_q=s, seqlen_k=s, batch=b)
    cases = dict(raw=raw,
                 out=lambda: fa4.attention(q, k, v, causal=True, out=o, softcap=30.0, sinks=sinks),
                 alloc=lambda: fa4.attention(q, k, v, causal=True, softcap=30.0, sinks=sinks),
                 op=lambda: torch.ops.fa4.attention(q, k, v, True, -1, -1, 0.0, False, None, None, None, 0, 30.0,
                                                    sinks))
    rows.append(dict(shape="attention cap+sinks b%d s%d %d/%d d%d causal" % (b, s, hq, hkv, d),
                     family=e.plan.family, workspace_bytes=e.ws_bytes, **measure(cases, args, torch)))
    print_row(rows[-1])

    # Decode against a dense and a paged cache (split-KV: a workspace per stream).
    for (b, L, hq, hkv, d, page) in [(64, 4096, 32, 4, 128, 0), (64, 4096, 32, 4, 128, 16)]:
        q = torch.randn(b, 1, hq, d, **bf)
        kc = torch.randn(b, L, hkv, d, **bf)
        vc = torch.randn_like(kc)
        table = None
        if page:
            n = b * L // page
            perm = torch.randperm(n, device="cuda")
            kc, vc = kc.reshape(n, page, hkv, d)[perm], vc.reshape(n, page, hkv, d)[perm]
            table = torch.argsort(perm).view(b, L // page).to(torch.int32)
        lens = torch.full((b,), L - 5, device="cuda", dtype=torch.int32)
        o = torch.empty_like(q)
        fa4.attention_with_kvcache(q, kc, vc, lens, table, out=o)
        e = _ops.kvcache(q, kc, vc, lens, table, o, False, -1, -1, 0.0, False, plan_only=True)
        raw = raw_launch(fa4, e, torch, q=q.data_ptr(), k=kc.data_ptr(), v=vc.data_ptr(), o=o.data_ptr(),
                         seqused_k=lens.data_ptr(), block_table=None if table is None else table.data_ptr(),
                         seqlen_q=1, seqlen_k=L, batch=b)
        cases = dict(raw=raw,
                     out=lambda: fa4.attention_with_kvcache(q, kc, vc, lens, table, out=o),
                     alloc=lambda: fa4.attention_with_kvcache(q, kc, vc, lens, table),
                     op=lambda: torch.ops.fa4.attention_with_kvcache(q, kc, vc, lens, -1, table, False, -1, -1,
                                                                     0.0, False))
        rows.append(dict(shape="kvcache decode b%d L%d %d/%d d%d%s" % (b, L, hq, hkv, d,
                                                                      " page%d" % page if page else ""),
                         family=e.plan.family, workspace_bytes=e.ws_bytes,
                         **measure(cases, args, torch)))
        print_row(rows[-1])

    pieces(torch, q)
    worst = max(r["overhead"] for r in rows)
    verdict = "within" if worst <= OVERHEAD_TARGET_US else "OVER"
    print("largest overhead (out= - raw, median of paired rounds): %.2f us, %s the %.0f us target"
          % (worst, verdict, OVERHEAD_TARGET_US))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__, rows=rows,
                           calls=args.calls, groups=args.groups, worst_overhead_us=worst,
                           target_us=OVERHEAD_TARGET_US), f, indent=1)
    return 0 if worst <= OVERHEAD_TARGET_US else 1


def measure(cases, args, torch):
    """Each case's median host time per call, and out='s overhead over raw
    measured in pairs (paired_overhead_us)."""
    r = {n: per_call_us(f, args.calls, args.groups, torch) for n, f in cases.items()}
    r["overhead"], r["overhead_min"], r["overhead_max"] = paired_overhead_us(
        cases["out"], cases["raw"], args.calls, args.groups, torch)
    return r


def print_row(r):
    print("%-44s %8.2f %8.2f %8.2f %8.2f %9.2f %6.2f..%-6.2f %6d/%d" % (
        r["shape"], r["raw"], r["out"], r["alloc"], r["op"], r["overhead"], r["overhead_min"],
        r["overhead_max"], r["family"], r["workspace_bytes"]))


def pieces(torch, q):
    """Host time of what a call does besides the launch, one by one (a call
    with a workspace asks whether the stream is capturing)."""
    from fa4 import _abi, _ops
    index = q.get_device()
    pack = _abi.TENSORS_PACK.pack
    g = dict(torch=torch, q=q, _ops=_ops, index=index, pack=pack, d={}, T=torch.Tensor)
    stmts = ["_ops._capturing()", "_ops._raw_stream(index)", "torch.compiler.is_compiling()",
             "torch.is_grad_enabled()", "q.data_ptr()", "q.shape", "q.stride()", "q.is_contiguous()", "q.dtype",
             "q.get_device()", "q.requires_grad", "type(q) is T",
             "d.get((q.shape, q.is_contiguous() or q.stride(), q.dtype, q.get_device()))",
             "pack(144, 1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0)"]
    print("host time of the pieces of a call (us)")
    for stmt in stmts:
        n = 20000
        t = min(timeit.repeat(stmt, globals=g, number=n, repeat=5)) / n * 1e6
        print("  %-78s %6.3f" % (stmt, t))


if __name__ == "__main__":
    sys.exit(main())
