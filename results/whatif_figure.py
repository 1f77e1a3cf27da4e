#!/usr/bin/env python3
"""The what-if figure of results/README.md, made through the Python module (issue 20).

Usage (from the repository root, after a build that found pybind11):
  PYTHONPATH=build/python /usr/bin/python3 results/whatif_figure.py [--jobs 2] [--out results/figures]

Runs trainsim.whatif on the 530B/2240 scenario (each profile parameter +10 %, each layout knob to its
neighbours) and draws the change of GPU-seconds per iteration of every variation that fits in memory as
a horizontal bar chart, written as SVG directly (no matplotlib needed). The caption names the scenario,
the profile and the critical path's biggest share.
"""
import argparse
import html
import os

import trainsim

SCENARIO = "scenarios/mt-nlg-530b-2240gpu.json"


def svg(result):
    rows = [r for r in result["sensitivities"] if "error" not in r and r["fits_in_memory"]]
    base = result["baseline"]
    shares = result["critical_path"]["shares"]
    biggest = result["critical_path"]["biggest_share"]
    share = shares[biggest + "_s"] / result["critical_path"]["length_s"]
    label_w, plot_w, right, row_h, top, bottom = 270, 460, 80, 22, 64, 40
    extent = max(abs(r["gpu_time_change"]) for r in rows) * 100 * 1.05 or 1.0
    width, height = label_w + plot_w + right, top + row_h * len(rows) + bottom
    axis = label_w + plot_w / 2
    scale = plot_w / 2 / extent
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
           'font-size="12">' % (width, height), '<rect width="100%" height="100%" fill="white"/>']
    title = "What moves %s (%d GPUs, profile %s)" % (base["name"], base["num_gpus"], base["profile"])
    captions = ["baseline %.2f s per iteration, critical path %.0f %% %s; +10 %% per profile parameter, "
                "layout knobs to their neighbours" % (base["iteration_time_s"], 100 * share, biggest),
                "bars: change of GPU-seconds per iteration (the iteration time where the GPU count stays); "
                "variations that do not fit in memory left out"]
    out.append('<text x="%d" y="18" text-anchor="middle" font-size="13">%s</text>' % (width / 2, html.escape(title)))
    for k, caption in enumerate(captions):
        out.append('<text x="%d" y="%d" text-anchor="middle" fill="#555" font-size="10">%s</text>' % (
            width / 2, 34 + 13 * k, html.escape(caption)))
    for i, r in enumerate(rows):
        y = top + i * row_h
        pct = 100 * r["gpu_time_change"]
        length = abs(pct) * scale
        x = axis - length if pct < 0 else axis
        out.append('<text x="%d" y="%d" text-anchor="end">%s</text>' % (label_w - 8, y + 15, html.escape(r["variation"])))
        out.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>' % (
            x, y + 4, max(length, 0.5), row_h - 8, "#2a9d5c" if pct < 0 else "#d1495b"))
        tx = axis + 4 if pct < 0 else axis + length + 4
        out.append('<text x="%.1f" y="%d">%+.2f %%</text>' % (tx, y + 15, pct))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (axis, top, axis, height - bottom))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", default="results/figures")
    args = parser.parse_args()
    result = trainsim.whatif(SCENARIO, jobs=args.jobs)
    path = os.path.join(args.out, "whatif_530b.svg")
    with open(path + ".tmp", "w") as f:
        f.write(svg(result))
    os.replace(path + ".tmp", path)
    print(path)


if __name__ == "__main__":
    main()
