#!/usr/bin/env python3
"""Serving shapes side by side, in one process on the same inputs: libfa4 (ctypes,
bench/compare.py's Fa4 over the fa4 package of python/) against cuDNN through PyTorch SDPA (dense decode),
FlashAttention-4 CuTe sm90 (contiguous and paged decode) and FlashInfer (paged decode),
where installed (../shared/peers).  Every library is timed the same way: 10 calls back
to back between two CUDA events, median of 15 groups.

Decode rows: TB/s = bytes of K and V read once / time.  Varlen prefill rows: TFLOP/s of
the causal attention actually computed, against cuDNN on the padded dense equivalent.

    python3 bench/serving_compare.py [--lib build/.libs/libfa4.so] [--only decode]
"""
import argparse
import math
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(__file__))
from compare import Fa4, bench_back_to_back as bench  # noqa: E402  (one ctypes description of the ABI)


def peers():
    fa4_aot = fi = None
    try:
        sys.path.insert(0, os.environ.get("FA4_AOT_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                      "..", "..", "shared", "peers", "fa4_sm90_aot")))
        import fa4_aot  # noqa: F811
    except Exception as e:  # noqa: BLE001
        print("FA4-CuTe unavailable: %s" % e)
    try:
        import flashinfer as fi  # noqa: F811
    except Exception as e:  # noqa: BLE001
        print("FlashInfer unavailable: %s" % e)
    return fa4_aot, fi


def paged(kc, vc, page):
    b, L, h, d = kc.shape
    pps = L // page
    n = b * pps
    perm = torch.randperm(n, device=kc.device)
    kp = torch.empty(n, page, h, d, device=kc.device, dtype=kc.dtype)
    vp = torch.empty_like(kp)
    kp[perm] = kc.reshape(n, page, h, d)
    vp[perm] = vc.reshape(n, page, h, d)
    return kp, vp, perm.view(b, pps).to(torch.int32).contiguous()


def decode_rows(fa4, fa4_aot, fi, shapes):
    print("%-34s | %7s %7s %7s %7s | %6s | %s" % ("decode (TB/s of K+V)", "libfa4", "cuDNN", "FA4-CuTe",
                                                  "FlashInf", "ratio", "rel.err / config"))
    for (b, sq, sk, hq, hkv, d, page) in shapes:
        name = "b%d q%d kv%d %d/%d d%d%s" % (b, sq, sk, hq, hkv, d, " page%d" % page if page else "")
        q = torch.randn(b, sq, hq, d, device="cuda", dtype=torch.bfloat16)
        kc = torch.randn(b, sk, hkv, d, device="cuda", dtype=torch.bfloat16)
        vc = torch.randn(b, sk, hkv, d, device="cuda", dtype=torch.bfloat16)
        o = torch.full_like(q, float("nan"))
        nbytes = 2.0 * kc.numel() * 2
        tbs = lambda t: nbytes / (t * 1e-3) / 1e12 if t else float("nan")
        causal = sq > 1
        qt, kt, vt = (x.transpose(1, 2) for x in (q, kc, vc))
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            ref = F.scaled_dot_product_attention(qt, kt, vt, is_causal=False, enable_gqa=hq != hkv) \
                if sq == 1 else None
        if page:
            kp, vp, table = paged(kc, vc, page)
            used = torch.full((b,), sk, device="cuda", dtype=torch.int32)
            plan, desc, src = fa4.plan(b, sq, sk, hq, hkv, d, causal, page_size=page, num_pages=kp.shape[0])
            run = lambda: fa4.forward(plan, q, kp, vp, o, table=table, used=used)
        else:
            plan, desc, src = fa4.plan(b, sq, sk, hq, hkv, d, causal)
            run = lambda: fa4.forward(plan, q, kc, vc, o)
        run()
        torch.cuda.synchronize()
        err = ((o.float() - ref.transpose(1, 2).float()).norm() / ref.float().norm()).item() \
            if ref is not None else float("nan")
        t_fa4 = bench(run)
        t_cudnn = t_cute = t_fi = None
        if not page:
            try:
                # SDPA's is_causal is top-left aligned (it would skip most keys when
                # sq < sk): time cuDNN unmasked, which reads the same K and V.
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                    t_cudnn = bench(lambda: F.scaled_dot_product_attention(qt, kt, vt, is_causal=False,
                                                                           enable_gqa=hq != hkv))
            except RuntimeError:
                pass
        if fa4_aot is not None:
            try:
                if page:
                    t_cute = bench(lambda: fa4_aot.flash_attn_varlen_func(q, kp, vp, page_table=table,
                                                                          seqused_k=used, causal=causal))
                else:
                    t_cute = bench(lambda: fa4_aot.flash_attn_func(q, kc, vc, causal=causal))
            except Exception:  # noqa: BLE001
                t_cute = None
        if fi is not None and page and sq == 1:
            try:
                ws = torch.zeros(256 << 20, dtype=torch.uint8, device="cuda")
                pps = table.shape[1]
                w = fi.BatchDecodeWithPagedKVCacheWrapper(ws, "NHD", use_tensor_cores=True)
                w.plan(torch.arange(0, b + 1, device="cuda", dtype=torch.int32) * pps, table.reshape(-1),
                       torch.full((b,), page, device="cuda", dtype=torch.int32), hq, hkv, d, page,
                       pos_encoding_mode="NONE", q_data_type=q.dtype, kv_data_type=kp.dtype)
                q2 = q[:, 0].contiguous()
                t_fi = bench(lambda: w.run(q2, (kp, vp)))
            except Exception:  # noqa: BLE001
                t_fi = None
        best = min([t for t in (t_cudnn, t_cute, t_fi) if t] or [float("nan")])
        print("%-34s | %7.3f %7.3f %7.3f %7.3f | %5.2fx | %.1e %s (%s)" % (
            name, tbs(t_fa4), tbs(t_cudnn), tbs(t_cute), tbs(t_fi), best / t_fa4, err, desc, src), flush=True)
        fa4.lib.fa4_plan_destroy(plan)


def varlen_rows(fa4, lens, hq=16, d=128, causal=True, label="", page=0):
    """Varlen prefill of LENS against the dense libfa4 grid at the same average
    length (same batch, same total tokens) and cuDNN on the padded dense batch."""
    b, mx = len(lens), max(lens)
    total = sum(lens)
    avg = (total + b - 1) // b
    cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), device="cuda", dtype=torch.int32)
    q = torch.randn(total, hq, d, device="cuda", dtype=torch.bfloat16)
    k = torch.randn_like(q)
    v = torch.randn_like(q)
    o = torch.full_like(q, float("nan"))
    per_seq = 0.5 if causal else 1.0
    flops = sum(4.0 * hq * L * L * d * per_seq for L in lens)
    plan, desc, src = fa4.plan(b, mx, mx, hq, hq, d, causal, varlen=1)
    run = lambda: fa4.forward(plan, q, k, v, o, cu_q=cu, cu_k=cu)
    run()
    torch.cuda.synchronize()
    if torch.isnan(o).any():
        print("  varlen output has NaN: the plan did not write every row")
    t = bench(run, groups=5, calls=3)
    # The dense grid at the average length: b sequences of AVG tokens.
    qd = torch.randn(b, avg, hq, d, device="cuda", dtype=torch.bfloat16)
    od = torch.empty_like(qd)
    dplan, ddesc, _ = fa4.plan(b, avg, avg, hq, hq, d, causal)
    td = bench(lambda: fa4.forward(dplan, qd, qd, qd, od), groups=5, calls=3)
    dflops = 4.0 * hq * avg * avg * d * per_seq * b
    qp = torch.randn(b, hq, mx, d, device="cuda", dtype=torch.bfloat16)
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        tc = bench(lambda: F.scaled_dot_product_attention(qp, qp, qp, is_causal=causal), groups=5, calls=3)
    tf, tfd = flops / t / 1e9, dflops / td / 1e9
    print("varlen %s prefill%s, %d seqs %d..%d (total %d, avg %d), %d heads d%d: libfa4 %.1f TFLOP/s "
          "(%.3f ms); dense libfa4 at avg %.1f TFLOP/s: %.2fx; cuDNN padded dense %.3f ms: %.2fx  %s (%s)" % (
              "causal" if causal else "non-causal", label, b, min(lens), mx, total, avg, hq, d, tf, t,
              tfd, tf / tfd, tc, tc / t, desc, src))
    if page:
        # The same keys in PAGE-row pages, handed out in reverse order.
        npg = [(L + page - 1) // page for L in lens]
        pool_k = torch.zeros(sum(npg), page, hq, d, device="cuda", dtype=torch.bfloat16)
        pool_v = torch.zeros_like(pool_k)
        table = torch.zeros(b, max(npg), device="cuda", dtype=torch.int32)
        nxt, off = sum(npg) - 1, 0
        for i, L in enumerate(lens):
            for j in range(npg[i]):
                rows = min(page, L - j * page)
                pool_k[nxt, :rows] = k[off + j * page: off + j * page + rows]
                pool_v[nxt, :rows] = v[off + j * page: off + j * page + rows]
                table[i, j] = nxt
                nxt -= 1
            off += L
        used = torch.tensor(lens, device="cuda", dtype=torch.int32)
        pplan, pdesc, _ = fa4.plan(b, mx, mx, hq, hq, d, causal, varlen=1, page_size=page,
                                   num_pages=pool_k.shape[0])
        op = torch.full_like(q, float("nan"))
        prun = lambda: fa4.forward(pplan, q, pool_k, pool_v, op, cu_q=cu, table=table, used=used)
        prun()
        torch.cuda.synchronize()
        err = ((op.float() - o.float()).norm() / o.float().norm()).item()
        tp = bench(prun, groups=5, calls=3)
        print("  %d-token pages: %.1f TFLOP/s (%.3f ms), %.2fx of contiguous, rel. diff %.1e  %s" % (
            page, flops / tp / 1e9, tp, t / tp, err, pdesc))
        fa4.lib.fa4_plan_destroy(pplan)
    fa4.lib.fa4_plan_destroy(plan)
    fa4.lib.fa4_plan_destroy(dplan)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default=os.path.join(os.path.dirname(__file__), "..", "build", ".libs", "libfa4.so"))
    ap.add_argument("--db", default=None)
    ap.add_argument("--only", default="decode,varlen")
    args = ap.parse_args()
    fa4 = Fa4(args.lib, args.db)
    fa4_aot, fi = peers()
    torch.manual_seed(0)
    print("device: %s, torch %s, cuDNN %s" % (torch.cuda.get_device_name(), torch.__version__,
                                             torch.backends.cudnn.version()))
    if "decode" in args.only:
        decode_rows(fa4, fa4_aot, fi, [
            (64, 1, 4096, 32, 4, 128, 0), (64, 1, 4096, 32, 4, 128, 16),
            (64, 1, 32768, 32, 4, 128, 0), (64, 1, 32768, 32, 4, 128, 16),
            (8, 1, 65536, 64, 8, 128, 0), (1, 1, 131072, 32, 8, 128, 0), (4, 1, 65536, 32, 8, 128, 0),
            (32, 1, 8192, 32, 4, 128, 0), (32, 4, 8192, 32, 4, 128, 0), (32, 8, 8192, 32, 4, 128, 0)])
    if "varlen" in args.only:
        g = torch.Generator().manual_seed(1)
        lens = [int(128 * (64 ** (i / 31))) for i in range(32)]   # 128 .. 8192, geometric
        varlen_rows(fa4, lens, label=" (geometric)", page=16)
        varlen_rows(fa4, lens, causal=False, label=" (geometric)")
        rnd = torch.randint(128, 8193, (32,), generator=g).tolist()
        varlen_rows(fa4, rnd, label=" (uniform)")
        varlen_rows(fa4, [2048] * 32, label=" (all 2048)")


if __name__ == "__main__":
    main()
