#!/usr/bin/env python3
"""What softcapping costs libfa4 and the one peer on the GPU machine that has it
(FlashInfer's single prefill, fa2 and fa3 backends; cuDNN and FA2 through SDPA and
FA4-CuTe's AOT kernels take no softcap), one process, the same inputs, every call
timed back to back (bench/compare.py's method).  Prints TFLOP/s plain and with
softcap and the cost (time with softcap / time without - 1) per library.

    PYTHONPATH=python:/tmp/peers-site python3 bench/softcap_peers.py [--cap 30] [--jit]

FlashInfer's softcap variants are not among its prebuilt kernels: --jit lets it
compile them with nvcc at first use (a few minutes); without it those rows say so.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from compare import time_groups, prepare  # noqa: E402

import fa4  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cap", type=float, default=30.0)
    ap.add_argument("--jit", action="store_true")
    ap.add_argument("--groups", type=int, default=10)
    ap.add_argument("--backends", default="fa2,fa3", help="FlashInfer backends to time")
    ap.add_argument("--shapes", default="128:16384:0,128:16384:1,256:16384:0,128:4096:0",
                    help="d:seqlen:causal,... (batch 1, 2048/d heads)")
    args = ap.parse_args()
    try:
        import flashinfer
        if "CUDA_HOME" not in os.environ and os.path.exists("/usr/local/cuda/bin/nvcc"):
            os.environ["CUDA_HOME"] = "/usr/local/cuda"
    except Exception as e:  # noqa: BLE001
        flashinfer = None
        print("FlashInfer unavailable: %s" % e)
    torch.manual_seed(0)
    print("device: %s; softcap %.1f" % (torch.cuda.get_device_name(), args.cap))
    for shape in args.shapes.split(","):
        d, s, causal = (int(x) for x in shape.split(":"))
        causal = bool(causal)
        h = 2048 // d
        q = torch.randn(1, s, h, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn_like(q)
        v = torch.randn_like(q)
        o = torch.empty_like(q)
        flops = 4.0 * s * s * h * d * (0.5 if causal else 1.0)
        libs = {"libfa4": lambda cap: (lambda: fa4.attention(q, k, v, causal=causal, softcap=cap, out=o))
                if cap else (lambda: fa4.attention(q, k, v, causal=causal, out=o))}
        if flashinfer is not None:
            for be in args.backends.split(","):
                libs["FlashInfer " + be] = (
                    lambda be: lambda cap: lambda: flashinfer.single_prefill_with_kv_cache(
                        q[0], k[0], v[0], causal=causal, backend=be, logits_soft_cap=cap or None))(be)
        fns, names = [], []
        for name, make in libs.items():
            for cap in (0.0, args.cap):
                f = make(cap)
                if name != "libfa4" and cap and not args.jit:
                    continue
                try:
                    f()
                    torch.cuda.synchronize()
                except Exception as e:  # noqa: BLE001
                    print("  %s cap=%g: %s" % (name, cap, str(e).splitlines()[0][:120]))
                    continue
                fns.append(prepare(f, 10))
                names.append((name, cap))
        ts = dict(zip(names, time_groups(fns, 10, args.groups)))
        print("d%d %dk %s:" % (d, s // 1024, "causal" if causal else "non-causal"))
        for name in libs:
            t0, t1 = ts.get((name, 0.0)), ts.get((name, args.cap))
            print("  %-16s plain %6.1f  softcap %6s  cost %s" % (
                name, flops / t0 / 1e9 if t0 else float("nan"),
                "%.1f" % (flops / t1 / 1e9) if t1 else "-",
                "%+.1f%%" % (100 * (t1 / t0 - 1)) if t0 and t1 else "-"), flush=True)


if __name__ == "__main__":
    main()
