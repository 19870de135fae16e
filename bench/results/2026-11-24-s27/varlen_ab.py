#!/usr/bin/env python3
"""Short varlen prefill through the public API (the library at --lib, its
default config, no database): ms per call for a few packed batches, 10
calls back to back per event pair, median of 15 groups (bench/compare.py's
timing).  Run once per library build in separate processes, alternating,
to compare two builds on the same inputs (torch.manual_seed fixed)."""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench"))
from compare import Fa4, bench_back_to_back as bench  # noqa: E402

ROWS = [  # name, lengths generator (lo, hi, n), heads q/kv, d, causal
    ("causal 64 x 64..512 d128 32/8", (64, 512, 64), 32, 8, 128, True),
    ("causal 64 x 64..512 d64 32/32", (64, 512, 64), 32, 32, 64, True),
    ("causal 128 x 16..256 d128 32/8", (16, 256, 128), 32, 8, 128, True),
    ("non-causal 32 x 128..2048 d128 16/16", (128, 2048, 32), 16, 16, 128, False),
    ("non-causal 64 x 64..512 d128 16/16", (64, 512, 64), 16, 16, 128, False),
    ("non-causal 32 x 128..2048 d64 16/16", (128, 2048, 32), 16, 16, 64, False),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    args = ap.parse_args()
    fa4 = Fa4(args.lib, None)
    for i, (name, (lo, hi, n), hq, hkv, d, causal) in enumerate(ROWS):
        g = torch.Generator().manual_seed(100 + i)
        lens = torch.randint(lo, hi + 1, (n,), generator=g).tolist()
        total, mx = sum(lens), max(lens)
        cu = torch.tensor([0] + torch.tensor(lens).cumsum(0).tolist(), device="cuda", dtype=torch.int32)
        torch.manual_seed(0)
        q = torch.randn(total, hq, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(total, hkv, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn_like(k)
        o = torch.full_like(q, float("nan"))
        plan, desc, src = fa4.plan(n, mx, mx, hq, hkv, d, causal, varlen=1)
        run = lambda: fa4.forward(plan, q, k, v, o, cu_q=cu, cu_k=cu)  # noqa: E731
        run()
        torch.cuda.synchronize()
        nan = bool(torch.isnan(o).any())
        ms = bench(run)
        flops = sum(4.0 * hq * L * L * d * (0.5 if causal else 1.0) for L in lens)
        print("row %-40s ms=%.4f tflops=%.1f%s  %s" % (name.replace(" ", "_"), ms, flops / ms / 1e9,
                                                      "  NaN!" if nan else "", desc))
        fa4.lib.fa4_plan_destroy(plan)


if __name__ == "__main__":
    main()
