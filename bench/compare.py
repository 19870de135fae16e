#!/usr/bin/env python3
"""Side-by-side: libfa4 (through ctypes) against PyTorch's scaled_dot_product_attention
with the cuDNN and FlashAttention-2 backends, same inputs, same process.

cuDNN and FA2 are timed on the same memory as strided [b, h, s, d] views and on
contiguous copies; the faster layout is reported.  Checks that libfa4's output matches (relative error against cuDNN's and against a
float32 reference on a sample), then prints the ANCHORS grid as TFLOP/s with the ratio
to cuDNN.  Convention (FlashAttention papers): 16,384 tokens per batch, hidden 2048,
FLOPs = 4 * batch * heads * seqlen^2 * head_dim, halved for causal.

    python3 bench/compare.py [--lib build/.libs/libfa4.so] [--dims 64,128,256]
        [--seqlens 512,1024,...] [--reps 20] [--gqa] [--config "sm80 bm=..."]
"""
import argparse
import ctypes as C
import math
import os
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


class Problem(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("dtype", C.c_int), ("batch", C.c_int),
                ("seqlen_q", C.c_int), ("seqlen_k", C.c_int), ("heads_q", C.c_int),
                ("heads_kv", C.c_int), ("head_dim_qk", C.c_int), ("head_dim_v", C.c_int),
                ("causal", C.c_int), ("window_left", C.c_int), ("window_right", C.c_int),
                ("softmax_scale", C.c_float), ("return_lse", C.c_int),
                ("q_strides", C.c_int64 * 3), ("k_strides", C.c_int64 * 3),
                ("v_strides", C.c_int64 * 3), ("o_strides", C.c_int64 * 3),
                ("varlen", C.c_int), ("page_size", C.c_int), ("attention_sinks", C.c_int),
                ("block_table_stride", C.c_int), ("num_pages", C.c_int)]


class Config(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("family", C.c_int)] + [
        (n, C.c_int) for n in ("bm", "bn", "stages", "swizzle", "fused_kv", "q_tiles", "warps",
                               "consumer_wgs", "producer_regs", "consumer_regs", "cluster",
                               "exp2_emu_pct", "rescale_threshold", "pingpong", "scheduler",
                               "splits", "pack_gqa", "kv_split_warps")]


class ContextOptions(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("db_path", C.c_char_p), ("system_db_path", C.c_char_p),
                ("no_database", C.c_int), ("plan_only", C.c_int), ("arch", C.c_char_p),
                ("check_inputs", C.c_int)]


class PlanOptions(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("config", C.POINTER(Config)),
                ("allow_heuristic", C.c_int), ("no_binary_cache", C.c_int)]


class Tensors(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("q", C.c_void_p), ("k", C.c_void_p), ("v", C.c_void_p),
                ("o", C.c_void_p), ("lse", C.c_void_p), ("cu_seqlens_q", C.c_void_p),
                ("cu_seqlens_k", C.c_void_p), ("block_table", C.c_void_p), ("seqused_k", C.c_void_p),
                ("workspace", C.c_void_p), ("seqlen_q", C.c_int), ("seqlen_k", C.c_int), ("batch", C.c_int)]


SOURCES = {1: "exact", 2: "system-exact", 3: "nearest", 4: "same-arch", 5: "heuristic", 6: "explicit"}


class Fa4:
    def __init__(self, path, db=None):
        self.lib = C.CDLL(path)
        L = self.lib
        L.fa4_context_errmsg.restype = C.c_char_p
        L.fa4_context_last_error.restype = C.c_char_p
        L.fa4_config_format.restype = C.c_char_p
        self.ctx = C.c_void_p()
        opts = ContextOptions(C.sizeof(ContextOptions), db.encode() if db else None, None,
                              0 if db else 1, 0, None, 0)
        st = L.fa4_context_create(C.byref(self.ctx), 0, C.byref(opts))
        if st:
            raise RuntimeError("fa4_context_create: %s" % L.fa4_context_last_error().decode())

    def plan(self, b, sq, sk, hq, hkv, d, causal, config=None, varlen=0, page_size=0, num_pages=0):
        p = Problem()
        p.struct_size = C.sizeof(Problem)
        p.dtype, p.batch, p.seqlen_q, p.seqlen_k = 1, b, sq, sk
        p.heads_q, p.heads_kv, p.head_dim_qk, p.head_dim_v = hq, hkv, d, d
        p.causal, p.window_left, p.window_right, p.return_lse = int(causal), -1, -1, 0
        p.varlen, p.page_size, p.num_pages = varlen, page_size, num_pages
        po = PlanOptions(C.sizeof(PlanOptions), C.pointer(config) if config else None, 1, 0)
        plan = C.c_void_p()
        st = self.lib.fa4_plan_create(C.byref(plan), self.ctx, C.byref(p), C.byref(po))
        if st:
            raise RuntimeError("fa4_plan_create: %s" % self.lib.fa4_context_errmsg(self.ctx).decode())
        cfg, src = Config(), C.c_int()
        cfg.struct_size = C.sizeof(Config)
        self.lib.fa4_plan_config(plan, C.byref(cfg), C.byref(src))
        buf = C.create_string_buffer(256)
        desc = self.lib.fa4_config_format(C.byref(cfg), buf, 256).decode()
        return plan, desc, SOURCES.get(src.value, "?")

    def forward(self, plan, q, k, v, o, cu_q=None, cu_k=None, table=None, used=None):
        ptr = lambda t: t.data_ptr() if t is not None else None
        t = Tensors(C.sizeof(Tensors), q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(),
                    None, ptr(cu_q), ptr(cu_k), ptr(table), ptr(used), None, 0, 0, 0)
        st = self.lib.fa4_forward(plan, C.byref(t), C.c_void_p(torch.cuda.current_stream().cuda_stream))
        if st:
            raise RuntimeError("fa4_forward: %s" % self.lib.fa4_context_errmsg(self.ctx).decode())


def bench(fn, reps, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def bench_back_to_back(fn, groups=15, calls=10):
    """Median milliseconds per call over GROUPS groups of CALLS calls between two events:
    host dispatch hides behind the GPU, as in a pipelined application."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(groups):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(calls):
            fn()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) / calls)
    return statistics.median(times)


def sdpa(backend, q, k, v, causal, gqa):
    with sdpa_kernel([backend]):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default=os.path.join(os.path.dirname(__file__), "..", "build", ".libs", "libfa4.so"))
    ap.add_argument("--db", default=None, help="config database (default: none, heuristic configs)")
    ap.add_argument("--dims", default="64,128,256")
    ap.add_argument("--seqlens", default="512,1024,2048,4096,8192,16384")
    ap.add_argument("--causal", default="0,1")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--gqa", action="store_true", help="also the GQA rows (32 q / 8 kv heads, d128, 4k and 16k)")
    ap.add_argument("--no-fa2", action="store_true")
    args = ap.parse_args()

    fa4 = Fa4(args.lib, args.db)
    torch.manual_seed(0)
    print("device: %s, torch %s, cuDNN %s" % (torch.cuda.get_device_name(), torch.__version__,
                                             torch.backends.cudnn.version()))
    rows = []
    cases = []
    for d in map(int, args.dims.split(",")):
        for causal in map(int, args.causal.split(",")):
            for s in map(int, args.seqlens.split(",")):
                cases.append((16384 // s, s, 2048 // d, 2048 // d, d, bool(causal)))
    if args.gqa:
        for s in (4096, 16384):
            for causal in (False, True):
                cases.append((max(1, 16384 // s), s, 32, 8, 128, causal))
    hdr = "%-4s %-6s %6s %5s %4s/%-3s | %8s %8s %8s | %6s | %-9s %s" % (
        "d", "causal", "seqlen", "batch", "hq", "hkv", "libfa4", "cuDNN", "FA2", "ratio", "rel.err", "config (source)")
    print(hdr)
    print("-" * len(hdr))
    for (b, s, hq, hkv, d, causal) in cases:
        q = torch.randn(b, s, hq, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b, s, hkv, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(b, s, hkv, d, device="cuda", dtype=torch.bfloat16)
        o = torch.full_like(q, float("nan"))
        try:
            plan, desc, src = fa4.plan(b, s, s, hq, hkv, d, causal)
        except RuntimeError as e:
            print("%-4d %-6s %6d: %s" % (d, causal, s, e))
            continue
        fa4.forward(plan, q, k, v, o)
        torch.cuda.synchronize()
        qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))   # SDPA wants [b, h, s, d]
        gqa = hq != hkv
        ref = sdpa(SDPBackend.CUDNN_ATTENTION, qt, kt, vt, causal, gqa).transpose(1, 2)
        err = ((o.float() - ref.float()).norm() / ref.float().norm()).item()
        if math.isnan(err):
            err = float("inf")
        flops = 4.0 * b * hq * s * s * d / (2 if causal else 1)
        t_fa4 = bench(lambda: fa4.forward(plan, q, k, v, o), args.reps)
        # cuDNN on the same BSHD memory (strided views) and on contiguous BHSD
        # copies: the faster of the two is the bar.
        qc, kc, vc = (x.contiguous() for x in (qt, kt, vt))
        t_cudnn = min(bench(lambda: sdpa(SDPBackend.CUDNN_ATTENTION, qt, kt, vt, causal, gqa), args.reps),
                      bench(lambda: sdpa(SDPBackend.CUDNN_ATTENTION, qc, kc, vc, causal, gqa), args.reps))
        t_fa2 = None
        if not args.no_fa2 and not gqa:
            try:
                t_fa2 = min(bench(lambda: sdpa(SDPBackend.FLASH_ATTENTION, qt, kt, vt, causal, gqa), args.reps),
                            bench(lambda: sdpa(SDPBackend.FLASH_ATTENTION, qc, kc, vc, causal, gqa), args.reps))
            except RuntimeError:
                t_fa2 = None
        tf = lambda t: flops / t / 1e9 if t else float("nan")
        ratio = t_cudnn / t_fa4
        print("%-4d %-6s %6d %5d %4d/%-3d | %8.1f %8.1f %8.1f | %5.2fx | %-9.2e %s (%s)%s" % (
            d, "yes" if causal else "no", s, b, hq, hkv, tf(t_fa4), tf(t_cudnn), tf(t_fa2), ratio, err,
            desc, src, "  MISMATCH" if err > 2e-2 else ""), flush=True)
        rows.append(ratio)
        fa4.lib.fa4_plan_destroy(plan)
        del q, k, v, o, ref, qc, kc, vc
    if rows:
        print("geomean ratio to cuDNN: %.3f over %d shapes" % (math.exp(sum(map(math.log, rows)) / len(rows)), len(rows)))


if __name__ == "__main__":
    main()
