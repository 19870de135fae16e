#!/usr/bin/env python3
"""Sustained load, one library at a time: throughput next to the SM clock and board
power that NVML samples meanwhile.  At long shapes the H100 runs at its power cap
(bench/NOTES.md, "Two clock levels"), so two kernels can differ in clock as much as in
work per clock; this separates the two.

For each shape, libfa4 (compare.py's Fa4 with --db, else the heuristic) and FA4-CuTe
(where its AOT kernels import) run SECONDS of back-to-back calls each, alternating
A B A B over --rounds; each stint reports TFLOP/s, the median SM clock and power over
its second half (the first half lets clock and power settle), and TFLOP/s per GHz.

    python3 bench/power_compare.py [--lib build/.libs/libfa4.so] [--db PATH]
        [--seconds 3] [--rounds 2] [--json out.json]
"""
import argparse
import json
import os
import statistics
import sys
import threading
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (Fa4, load_fa4_cute)

try:
    import pynvml
except ImportError:  # nvidia-ml-py ships in ../shared/peers
    pynvml = None

SHAPES = [  # b, s, hq, hkv, d, causal
    (1, 16384, 16, 16, 128, False),
    (1, 16384, 16, 16, 128, True),
    (1, 16384, 32, 8, 128, True),
    (1, 16384, 32, 32, 64, False),
]


class Sampler:
    """NVML samples (time, SM MHz, watts) every 20 ms on a thread."""

    def __init__(self):
        pynvml.nvmlInit()
        self.h = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
        self.samples, self.stop = [], threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop.is_set():
            self.samples.append((time.monotonic(),
                                 pynvml.nvmlDeviceGetClockInfo(self.h, pynvml.NVML_CLOCK_SM),
                                 pynvml.nvmlDeviceGetPowerUsage(self.h) / 1000.0))
            time.sleep(0.02)

    def between(self, t0, t1):
        s = [x for x in self.samples if t0 <= x[0] <= t1]
        return (statistics.median(x[1] for x in s), statistics.median(x[2] for x in s)) if s else (0, 0)


def stint(fn, flops, seconds, sampler):
    """Back-to-back groups of 10 calls for SECONDS: TFLOP/s, MHz, W over the second half."""
    start = time.monotonic()
    half = start + seconds / 2
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    times = []
    while time.monotonic() < start + seconds:
        ev[0].record()
        for _ in range(10):
            fn()
        ev[1].record()
        ev[1].synchronize()
        if time.monotonic() > half:
            times.append(ev[0].elapsed_time(ev[1]) / 10)
    mhz, watts = sampler.between(half, time.monotonic())
    ms = statistics.median(times)
    return dict(tflops=flops / ms / 1e9, mhz=mhz, watts=watts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default=os.path.join(os.path.dirname(__file__), "..", "build", ".libs", "libfa4.so"))
    ap.add_argument("--db", default=None)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json")
    args = ap.parse_args()
    if pynvml is None:
        sys.exit("power_compare.py needs pynvml (nvidia-ml-py)")
    fa4 = compare.Fa4(args.lib, args.db)
    cute, why = compare.load_fa4_cute()
    print("FA4-CuTe:", why if cute is None else "ok")
    sampler = Sampler()
    rows = []
    for b, s, hq, hkv, d, causal in SHAPES:
        q = torch.randn(b, s, hq, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b, s, hkv, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(b, s, hkv, d, device="cuda", dtype=torch.bfloat16)
        o = torch.empty_like(q)
        flops = 4.0 * b * hq * s * s * d / (2 if causal else 1)
        plan, desc, src = fa4.plan(b, s, s, hq, hkv, d, causal)
        libs = {"libfa4": lambda: fa4.forward(plan, q, k, v, o)}
        if cute is not None:
            libs["FA4-CuTe"] = lambda: cute(q, k, v, causal=causal)
        for fn in libs.values():
            fn()
        torch.cuda.synchronize()
        name = "d%d %d/%d %s %d" % (d, hq, hkv, "causal" if causal else "non-causal", s)
        for r in range(args.rounds):
            for lib, fn in libs.items():
                x = stint(fn, flops, args.seconds, sampler)
                x.update(shape=name, lib=lib, round=r, config=desc if lib == "libfa4" else "")
                rows.append(x)
                print("%-26s %-9s round %d: %6.1f TFLOP/s  %5.0f MHz  %5.0f W  %6.1f TFLOP/s per GHz" % (
                    name, lib, r, x["tflops"], x["mhz"], x["watts"], x["tflops"] / (x["mhz"] / 1000.0)),
                    flush=True)
        fa4.lib.fa4_plan_destroy(plan)
    sampler.stop.set()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
