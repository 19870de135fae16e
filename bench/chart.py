#!/usr/bin/env python3
"""Chart of bench/compare.py runs: TFLOP/s per shape for libfa4 and each peer, one
panel per head dim (GQA rows in their own), non-causal above causal, the bf16 matmul
ceiling of the same runs as a dashed line.  Several JSON files (repeat runs): the
median of each point, with the min-max spread as error bars.

    python3 bench/chart.py run1.json [run2.json ...] [-o perf.png] [--title TEXT]

Needs matplotlib (Agg backend, no display); runs on any machine, not only the GPU's.
"""
import argparse
import json
import os
import statistics
import sys

LIBS = ("libfa4", "cuDNN", "FA4-CuTe", "FlashInfer", "FA2")     # drawing order; unknown names follow
STYLE = {"libfa4": ("#d62728", "o"), "cuDNN": ("#1f77b4", "s"), "FA4-CuTe": ("#2ca02c", "^"),
         "FlashInfer": ("#9467bd", "D"), "FA2": ("#7f7f7f", "v")}


def load(paths):
    runs = []
    for path in paths:
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit("chart.py: %s: %s" % (path, e))
        if not isinstance(doc, dict) or "rows" not in doc:
            sys.exit("chart.py: %s is not a bench/compare.py --json file" % path)
        runs.append(doc)
    return runs


def panel_key(row):
    """(head dim, (heads_q, heads_kv) for GQA rows else None)."""
    hq, hkv = row["heads_q"], row["heads_kv"]
    return row["head_dim"], ((hq, hkv) if hq != hkv else None)


def collect(runs):
    """{(panel, causal): {lib: {seqlen: ([TFLOP/s over runs], any mismatch)}}}."""
    data = {}
    for run in runs:
        for row in run["rows"]:
            series = data.setdefault((panel_key(row), bool(row["causal"])), {})
            for lib, res in row["libs"].items():
                if res.get("tflops") is None:
                    continue
                vals, bad = series.setdefault(lib, {}).get(row["seqlen"], ([], False))
                vals.append(res["tflops"])
                series[lib][row["seqlen"]] = (vals, bad or res.get("status") == "mismatch")
    return data


def lib_order(data):
    names = {lib for series in data.values() for lib in series}
    return [n for n in LIBS if n in names] + sorted(names - set(LIBS))


def seq_label(s):
    return "%dk" % (s // 1024) if s % 1024 == 0 else str(s)


def method_text(run):
    m = run.get("method", {})
    calls = m.get("calls_per_group", "?")
    if m.get("timing") == "cuda-graphs":
        text = "CUDA graphs, %s calls per replay" % calls
    else:
        text = "back to back, %s calls per event pair" % calls
    return text + ", median of %s groups" % m.get("groups", "?")


def title_text(runs):
    devices = sorted({r.get("device", "?") for r in runs})
    versions = sorted({"torch %s, cuDNN %s" % (r.get("torch", "?"), r.get("cudnn", "?")) for r in runs})
    methods = sorted({method_text(r) for r in runs})
    if len(methods) > 1 or len(devices) > 1:
        print("chart.py: the runs differ in %s; the chart pools them all" %
              " and ".join(w for w, n in (("method", len(methods)), ("device", len(devices))) if n > 1),
              file=sys.stderr)
    spread = "; %d runs: median, bars min-max" % len(runs) if len(runs) > 1 else ""
    return "%s: attention forward, bf16, 16k tokens per batch, hidden 2048 (%s)\n%s%s" % (
        " / ".join(devices), ", ".join(versions), "\n".join(methods), spread)


def gemm_values(runs):
    return [r["gemm"]["tflops"] for r in runs if r.get("gemm", {}).get("tflops")]


def gemm_label(runs):
    sizes = sorted({r["gemm"].get("n", 8192) for r in runs if r.get("gemm")})
    return "bf16 matmul %s³ (cuBLAS)" % "/".join(map(str, sizes))


def draw(runs, out, title=None):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("chart.py needs matplotlib: pip install matplotlib (any machine will do: "
                 "copy the JSON from the GPU machine)")
    data = collect(runs)
    if not data:
        sys.exit("chart.py: no timed rows in %s" % ", ".join(r.get("_path", "the input") for r in runs))
    panels = sorted({p for p, _ in data}, key=lambda p: (p[0], p[1] or (0, 0)))
    causals = sorted({c for _, c in data})
    libs = lib_order(data)
    width = max(3.6 * len(panels) + 1.0, 11.0)    # room for the title and the legend
    fig, axes = plt.subplots(len(causals), len(panels), squeeze=False, sharey=True,
                             figsize=(width, 3.3 * len(causals) + 1.4))
    gemm, glabel = gemm_values(runs), gemm_label(runs)
    top = max([v for series in data.values() for pts in series.values() for vals, _ in pts.values()
               for v in vals] + gemm)
    for ci, causal in enumerate(causals):
        for pi, panel in enumerate(panels):
            ax = axes[ci][pi]
            d, gqa = panel
            ax.set_title("d%d%s, %s" % (d, " GQA %d/%d" % gqa if gqa else "", "causal" if causal else "non-causal"),
                         fontsize=10)
            series = data.get((panel, causal), {})
            seqlens = sorted({s for lib in series.values() for s in lib})
            for li, lib in enumerate(libs):
                pts = series.get(lib)
                if not pts:
                    continue
                color, marker = STYLE.get(lib, ("C%d" % (li + 4), "D"))
                xs = sorted(pts)
                med = [statistics.median(pts[s][0]) for s in xs]
                lo = [m - min(pts[s][0]) for m, s in zip(med, xs)]
                hi = [max(pts[s][0]) - m for m, s in zip(med, xs)]
                ax.errorbar(xs, med, yerr=[lo, hi] if len(runs) > 1 else None, color=color, marker=marker,
                            markersize=4, linewidth=1.6 if lib == "libfa4" else 1.1, capsize=3, label=lib)
                bad = [(s, m) for s, m in zip(xs, med) if pts[s][1]]
                if bad:
                    ax.scatter(*zip(*bad), marker="x", s=60, color="black", zorder=5,
                               label="output mismatch")
            if gemm:
                ax.axhline(statistics.median(gemm), color="black", linestyle="--", linewidth=0.9,
                           label=glabel)
            ax.set_xscale("log", base=2)
            if seqlens:
                ax.set_xticks(seqlens)
                ax.set_xticklabels([seq_label(s) for s in seqlens], fontsize=8)
            ax.minorticks_off()
            ax.grid(True, alpha=0.3)
            ax.set_ylim(0, top * 1.08)     # one scale for all panels: none clips
            if ci == len(causals) - 1:
                ax.set_xlabel("sequence length")
            if pi == 0:
                ax.set_ylabel("TFLOP/s")
    handles = {}
    for ax in axes.flat:
        for h, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, h)
    if gemm:
        if glabel in handles:
            handles["%s: %.0f TFLOP/s%s" % (glabel, statistics.median(gemm), " (%.0f-%.0f)" % (min(gemm), max(gemm))
                                                  if len(gemm) > 1 else "")] = handles.pop(glabel)
    fig.legend(handles.values(), handles.keys(), loc="lower center", ncol=min(len(handles), 6 if width > 13 else 3), fontsize=9,
               frameon=False)
    fig.suptitle(title or title_text(runs), fontsize=10)
    fig.tight_layout(rect=(0, 0.1 if width <= 13 else 0.06, 1, 1))
    if os.path.dirname(out):
        os.makedirs(os.path.dirname(out), exist_ok=True)
    fig.savefig(out, dpi=150)
    print("wrote %s (%d run%s, %d panels)" % (out, len(runs), "s" if len(runs) > 1 else "",
                                              len(panels) * len(causals)))


def main(argv=None):
    ap = argparse.ArgumentParser(description="Chart bench/compare.py --json runs (TFLOP/s per shape).")
    ap.add_argument("json", nargs="+", help="compare.py --json files (several: median and min-max)")
    ap.add_argument("-o", "--output", default="compare.png", help="PNG to write (default compare.png)")
    ap.add_argument("--title", help="replace the title (device, versions, method)")
    args = ap.parse_args(argv)
    runs = load(args.json)
    for run, path in zip(runs, args.json):
        run["_path"] = path
    draw(runs, args.output, args.title)


if __name__ == "__main__":
    main()
