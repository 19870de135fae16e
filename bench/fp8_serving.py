#!/usr/bin/env python3
"""fp8 e4m3 against bf16 on the serving paths, through the Python package as an
inference engine calls it (fa4.attention_varlen, fa4.attention_with_kvcache with out=),
one process, the same values (fp8 inputs are the bf16 ones quantised with per-(batch,
KV head) descales).  Every row is timed back to back (bench/compare.py's method: calls
between two CUDA events, median of groups), bf16 and fp8 alternating.

Prefill rows: TFLOP/s of the attention actually computed.  Decode rows: TB/s of the K
and V bytes read once (fp8 reads half the bytes of bf16).  rel.err: fp8's output
against bf16's (both libfa4), norm of the difference over the norm of bf16's.

    PYTHONPATH=python python3 bench/fp8_serving.py [--groups 15] [--calls 10]
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from compare import time_groups, prepare  # noqa: E402  (one timing method for every bench)

import fa4  # noqa: E402

E4M3 = torch.float8_e4m3fn
E4M3_MAX = 448.0


def quantise(x, batch_of_row=None, batch=1):
    """X ([batch, L, h, d] or [total, h, d] with BATCH_OF_ROW) as e4m3 with one descale
    per (batch, head): the largest magnitude maps to 448.  Returns (x8, descale [batch, h])."""
    h = x.shape[-2]
    if batch_of_row is None:
        amax = x.abs().amax(dim=(1, 3)).float()                          # [batch, h]
        ds = (amax / E4M3_MAX).clamp(min=1e-12)
        x8 = (x.float() / ds[:, None, :, None]).to(E4M3)
    else:
        amax = torch.zeros(batch, h, device=x.device)
        amax.index_reduce_(0, batch_of_row, x.abs().amax(dim=2).float(), "amax")
        ds = (amax / E4M3_MAX).clamp(min=1e-12)
        x8 = (x.float() / ds[batch_of_row][:, :, None]).to(E4M3)
    return x8.contiguous(), ds.contiguous()


def rel_err(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


def time_pair(f16, f8, groups, calls):
    """Median ms per call of F16 and F8, timed alternately."""
    return time_groups([prepare(f16, calls), prepare(f8, calls)], calls, groups)


def varlen_row(name, lens, hq, hkv, d, causal, args):
    b = len(lens)
    cu = torch.tensor([0] + torch.tensor(lens).cumsum(0).tolist(), device="cuda", dtype=torch.int32)
    total, mx = sum(lens), max(lens)
    row_batch = torch.repeat_interleave(torch.arange(b, device="cuda"), torch.tensor(lens, device="cuda"))
    q = torch.randn(total, hq, d, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(total, hkv, d, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(total, hkv, d, device="cuda", dtype=torch.bfloat16)
    # Q's descale is per (batch, KV head) too: the group's heads share it.
    qg = q.view(total, hkv, hq // hkv * d)
    q8g, qs = quantise(qg, row_batch, b)
    q8 = q8g.view(total, hq, d)
    k8, ks = quantise(k, row_batch, b)
    v8, vs = quantise(v, row_batch, b)
    o16 = torch.full_like(q, float("nan"))
    o8 = torch.full_like(q, float("nan"))
    f16 = lambda: fa4.attention_varlen(q, k, v, cu, cu, mx, mx, causal=causal, out=o16)
    f8 = lambda: fa4.attention_varlen(q8, k8, v8, cu, cu, mx, mx, causal=causal, out=o8,
                                      q_descale=qs, k_descale=ks, v_descale=vs)
    f16(), f8()
    torch.cuda.synchronize()
    err = rel_err(o8, o16)
    t16, t8 = time_pair(f16, f8, args.groups, args.calls)
    per = 0.5 if causal else 1.0
    flops = sum(4.0 * hq * L * L * d * per for L in lens)
    print("%-44s | %7.1f %7.1f | %5.2fx | %.1e" % (name, flops / t16 / 1e9, flops / t8 / 1e9, t16 / t8, err),
          flush=True)


def kvcache_row(name, b, sq, sk, hq, hkv, d, page, args):
    """Queries of SQ new tokens per sequence against a cache of SK keys (the new ones
    included), dense or in PAGE-row pages handed out shuffled."""
    q = torch.randn(b, sq, hq, d, device="cuda", dtype=torch.bfloat16)
    kc = torch.randn(b, sk, hkv, d, device="cuda", dtype=torch.bfloat16)
    vc = torch.randn(b, sk, hkv, d, device="cuda", dtype=torch.bfloat16)
    qg = q.view(b, sq, hkv, hq // hkv * d)
    q8g, qs = quantise(qg)
    q8 = q8g.view(b, sq, hq, d)
    k8, ks = quantise(kc)
    v8, vs = quantise(vc)
    table = None
    if page:
        pps = sk // page
        perm = torch.randperm(b * pps, device="cuda")
        table = perm.view(b, pps).to(torch.int32).contiguous()

        def pages(x):
            p = torch.empty(b * pps, page, hkv, d, device="cuda", dtype=x.dtype)
            p[perm] = x.reshape(b * pps, page, hkv, d)
            return p
        kc, vc, k8, v8 = pages(kc), pages(vc), pages(k8), pages(v8)
    lens = torch.full((b,), sk, device="cuda", dtype=torch.int32)
    o16 = torch.full_like(q, float("nan"))
    o8 = torch.full_like(q, float("nan"))
    causal = sq > 1
    f16 = lambda: fa4.attention_with_kvcache(q, kc, vc, lens, table, causal=causal, out=o16)
    f8 = lambda: fa4.attention_with_kvcache(q8, k8, v8, lens, table, causal=causal, out=o8,
                                            q_descale=qs, k_descale=ks, v_descale=vs)
    f16(), f8()
    torch.cuda.synchronize()
    err = rel_err(o8, o16)
    t16, t8 = time_pair(f16, f8, args.groups, args.calls)
    if sq == 1:
        kv16 = 2.0 * b * sk * hkv * d * 2
        print("%-44s | %7.2f %7.2f | %5.2fx | %.1e   (TB/s of K+V; %.1f / %.1f us)" % (
            name, kv16 / t16 / 1e9, kv16 / 2 / t8 / 1e9, t16 / t8, err, t16 * 1e3, t8 * 1e3), flush=True)
    else:
        flops = 4.0 * b * hq * sq * d * (sk - (sq - 1) / 2.0)
        print("%-44s | %7.1f %7.1f | %5.2fx | %.1e" % (name, flops / t16 / 1e9, flops / t8 / 1e9, t16 / t8, err),
              flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--groups", type=int, default=15)
    ap.add_argument("--calls", type=int, default=10)
    args = ap.parse_args()
    torch.manual_seed(0)
    print("device: %s, torch %s, libfa4 %s" % (torch.cuda.get_device_name(), torch.__version__,
                                               fa4.library().version()))
    print("%-44s | %7s %7s | %6s | %s" % ("row (TFLOP/s, or TB/s for decode)", "bf16", "fp8", "fp8/bf16",
                                          "rel.err"))
    geo = [int(128 * (64 ** (i / 31))) for i in range(32)]           # 128 .. 8192
    g = torch.Generator().manual_seed(1)
    uni = torch.randint(128, 8193, (32,), generator=g).tolist()
    varlen_row("varlen causal geometric 32 seqs 16/16 d128", geo, 16, 16, 128, True, args)
    varlen_row("varlen non-causal geometric 32 seqs 16/16 d128", geo, 16, 16, 128, False, args)
    varlen_row("varlen causal uniform 32 seqs 32/8 d128", uni, 32, 8, 128, True, args)
    varlen_row("varlen causal all-2048 32 seqs 16/16 d128", [2048] * 32, 16, 16, 128, True, args)
    kvcache_row("kv-cache chunk b8 q512 kv8k 32/8 d128", 8, 512, 8192, 32, 8, 128, 0, args)
    kvcache_row("kv-cache chunk b8 q512 kv8k 32/8 d128 page16", 8, 512, 8192, 32, 8, 128, 16, args)
    kvcache_row("kv-cache chunk b8 q512 kv8k 32/8 d128 page64", 8, 512, 8192, 32, 8, 128, 64, args)
    kvcache_row("decode b64 kv4k 32/4 d128", 64, 1, 4096, 32, 4, 128, 0, args)
    kvcache_row("decode b64 kv4k 32/4 d128 page16", 64, 1, 4096, 32, 4, 128, 16, args)
    kvcache_row("decode b8 kv32k 32/8 d128", 8, 1, 32768, 32, 8, 128, 0, args)
    kvcache_row("spec b32 q4 kv8k 32/4 d128", 32, 4, 8192, 32, 4, 128, 0, args)


if __name__ == "__main__":
    main()
