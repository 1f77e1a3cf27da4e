#!/usr/bin/env python3
"""Iteration time and MFU against micro-batch size for Korthikanti's 175B, through the Python module.

Usage (from the repository root, after a build that found pybind11; results/regenerate.sh runs it):
  PYTHONPATH=build/python /usr/bin/python3 results/microbatch_figure.py [--jobs 2] [--out results/figures]

One trainsim.sweep over training.micro_batch_size on scenarios/korthikanti-175b.json (TP 8, PP 8,
interleaved v = 3, global batch 64, selective recompute), the same rows `trainsim sweep` writes, drawn
with matplotlib: iteration time (s) and MFU (%) per micro-batch size; a size whose peak memory exceeds
the GPU's is drawn hollow and labelled "OOM", since the simulator times it but it would not run.
Writes microbatch_175b.png and microbatch_175b.svg.
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import trainsim  # noqa: E402

SCENARIO = "scenarios/korthikanti-175b.json"
SIZES = [1, 2, 4, 8]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", default="results/figures")
    args = parser.parse_args()

    rows = trainsim.sweep({"base": os.path.abspath(SCENARIO),
                           "axes": {"training.micro_batch_size": SIZES}}, jobs=args.jobs)
    bad = [r for r in rows if r["error"]]
    if bad:
        raise SystemExit("microbatch_figure: %s" % bad[0]["error"])
    mbs = [r["training.micro_batch_size"] for r in rows]
    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(8, 3.2))
    for ax, key, scale, label in ((ax_t, "iteration_time_s", 1.0, "iteration time (s)"),
                                  (ax_m, "mfu", 100.0, "MFU (%)")):
        ys = [r[key] * scale for r in rows]
        ax.plot(mbs, ys, color="tab:blue", zorder=1)
        for x, y, r in zip(mbs, ys, rows):
            fits = r["fits_in_memory"]
            ax.scatter([x], [y], s=36, zorder=2, color="tab:blue" if fits else "white",
                       edgecolors="tab:blue")
            if not fits:
                ax.annotate("OOM", (x, y), textcoords="offset points", xytext=(0, 7), ha="center",
                            fontsize=8)
        ax.set_xscale("log", base=2)
        ax.set_xticks(mbs)
        ax.set_xticklabels([str(m) for m in mbs])
        ax.set_xlabel("micro-batch size")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.margins(y=0.15)  # room for the OOM labels
    fig.suptitle("Korthikanti 175B (TP 8, PP 8, v = 3, global batch 64): micro-batch size, via trainsim.sweep",
                 fontsize=9)
    fig.tight_layout()
    os.makedirs(args.out, exist_ok=True)
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(args.out, "microbatch_175b." + ext), dpi=120)
    for r in rows:
        print("microbatch_figure: mbs %d: %.3f s, MFU %.1f %%%s" % (
            r["training.micro_batch_size"], r["iteration_time_s"], 100 * r["mfu"],
            "" if r["fits_in_memory"] else " (does not fit)"))


if __name__ == "__main__":
    main()
