#!/usr/bin/env python3
"""Draws the figures of results/ from the CSV and JSON that collect_data.py wrote.

Usage: plot_figures.py --data DATA_DIR --out FIGURES_DIR

Each figure is written as PNG and SVG and carries its caption (scenario and hardware profile) in the
image; results/README.md repeats the captions. Needs Debian's python3-matplotlib.
"""
import argparse
import csv
import json
import os
import textwrap
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

GIB = 1024.0 ** 3

# Reproducible files: no timestamps, fixed SVG ids.
plt.rcParams.update({
    "svg.hashsalt": "trainsim-results",
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.axisbelow": True,
})

COLORS = {
    "forward": "#4C72B0",
    "backward": "#DD8452",
    "recompute": "#C44E52",
    "tp_comm": "#8172B3",
    "pp_comm": "#55A868",
    "dp_comm": "#937860",
    "static": "#8C8C8C",
    "activation": "#4C72B0",
}


def read_csv(data, name):
    with open(os.path.join(data, name)) as f:
        return list(csv.DictReader(f))


def caption(fig, text, lines=2):
    """The caption under the figure, wrapped to its width."""
    width = int(fig.get_figwidth() * 15)
    fig.text(0.01, 0.01, "\n".join(textwrap.wrap(text, width)), ha="left", va="bottom", fontsize=8.5,
             color="#333333")


def save(fig, out, stem):
    fig.savefig(os.path.join(out, stem + ".png"), dpi=150, metadata={"Software": None})
    fig.savefig(os.path.join(out, stem + ".svg"), metadata={"Date": None, "Creator": None})
    plt.close(fig)


def per_layer(data, out):
    rows = read_csv(data, "per_layer_breakdown.csv")
    models = list(OrderedDict.fromkeys(r["model"] for r in rows))
    short = {"baseline": "no\nrecompute", "sp": "SP", "full": "full\nrecompute", "selective": "selective",
             "present": "selective\n+ SP"}
    fig, axes = plt.subplots(1, len(models), figsize=(13, 4.8))
    for ax, model in zip(axes, models):
        mr = [r for r in rows if r["model"] == model]
        x = range(len(mr))
        fwd = [float(r["forward_ms"]) for r in mr]
        bwd = [float(r["backward_without_recompute_ms"]) for r in mr]
        rec = [float(r["recompute_ms"]) for r in mr]
        ax.bar(x, fwd, color=COLORS["forward"], label="forward")
        ax.bar(x, bwd, bottom=fwd, color=COLORS["backward"], label="backward")
        ax.bar(x, rec, bottom=[f + b for f, b in zip(fwd, bwd)], color=COLORS["recompute"], label="recompute")
        top = max(f + b + r for f, b, r in zip(fwd, bwd, rec))
        for i, r in enumerate(mr):
            total = float(r["fwd_plus_bwd_ms"])
            over = float(r["overhead_vs_baseline_pct"])
            label = "%.1f" % total + ("" if r["config"] == "baseline" else "\n%+.0f %%" % over)
            ax.text(i, total + top * 0.015, label, ha="center", va="bottom", fontsize=8)
        ax.set_ylim(0, top * 1.2)
        ax.set_xticks(list(x))
        ax.set_xticklabels([short[r["config"]].replace("\n", " ") for r in mr], fontsize=8, rotation=35,
                           ha="right", rotation_mode="anchor")
        ax.set_title("%s  (%s)" % (model, os.path.basename(mr[0]["scenario"])))
        ax.set_ylabel("time per layer per micro-batch (ms)" if ax is axes[0] else "")
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="upper center", bbox_to_anchor=(0.5, 0.935), ncol=3, fontsize=8.5, frameon=False)
    fig.suptitle("Per-layer forward, backward and recompute time (like Korthikanti et al. 2022, Figure 8)", y=0.985)
    caption(fig, "One transformer layer on one GPU for one micro-batch, simulated by `trainsim layer` on "
                 "scenarios/korthikanti-{22b,175b,530b,1t}.json (TP 8; micro-batch 4 for 22B, 1 otherwise) with "
                 "the overrides of each bar, profile %s. Labels: forward + backward in ms, and the overhead over "
                 "'no recompute' (no SP). Backward is drawn without the recompute it contains." % mr[0]["profile"])
    fig.subplots_adjust(left=0.055, right=0.99, top=0.82, bottom=0.27, wspace=0.3)
    save(fig, out, "per_layer_breakdown")


def activation_shares(data, out):
    rows = read_csv(data, "activation_shares.csv")
    models = list(OrderedDict.fromkeys(r["model"] for r in rows))
    techniques = list(OrderedDict.fromkeys(r["technique"] for r in rows))
    colors = ["#8C8C8C", "#4C72B0", "#DD8452", "#55A868", "#C44E52"]
    fig, ax = plt.subplots(figsize=(12, 5.2))
    width = 0.8 / len(techniques)
    for j, (tech, color) in enumerate(zip(techniques, colors)):
        vals = [float(next(r for r in rows if r["model"] == m and r["technique"] == tech)["share_of_baseline_pct"])
                for m in models]
        xs = [i + (j - (len(techniques) - 1) / 2) * width for i in range(len(models))]
        ax.bar(xs, vals, width, color=color, label=tech)
        for x, v in zip(xs, vals):
            ax.text(x, v + 1, ("%.1f" % v) if v < 30 else ("%.0f" % v), ha="center", va="bottom", fontsize=7.5,
                    bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5, "alpha": 0.85})
    ax.axhline(20, color="#2d6b3c", ls="--", lw=1, label="paper: SP + selective 'under 20 %' of baseline")
    ax.axhline(10, color="#8b2f32", ls=":", lw=1.2, label="paper: full recompute 'at 10 %' of baseline")
    ax.set_xticks(range(len(models)))
    ax.set_xticklabels(models)
    ax.set_xlabel("model")
    ax.set_ylabel("activation memory per layer (% of tensor-parallel baseline)")
    ax.set_ylim(0, 108)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title("Activation memory by technique (like Korthikanti et al. 2022, Figure 7)")
    caption(fig, "Korthikanti Table 2 per-layer activation bytes for each technique, from `trainsim activations` "
                 "on scenarios/korthikanti-{22b,175b,530b,1t}.json (TP 8, s 2048; micro-batch as in each "
                 "scenario; the share does not depend on it). Dashed lines: the paper's text on Figure 7. "
                 "Per layer, without the Appendix B saving or the embedding and output-layer terms.")
    fig.subplots_adjust(left=0.07, right=0.72, top=0.92, bottom=0.2)
    save(fig, out, "activation_shares")


def memory_by_rank(data, out):
    rows = read_csv(data, "memory_by_rank_530b.csv")
    freed = [r for r in rows if r["deallocate_pipeline_outputs"] == "true"]
    kept = [r for r in rows if r["deallocate_pipeline_outputs"] == "false"]
    stages = [int(r["stage"]) for r in freed]
    static = [int(r["static_bytes"]) / GIB for r in freed]
    act = [int(r["activation_bytes"]) / GIB for r in freed]
    fig, ax = plt.subplots(figsize=(11, 5.2))
    ax.bar(stages, static, color=COLORS["static"], label="weights, gradients, optimizer state")
    ax.bar(stages, act, bottom=static, color=COLORS["activation"], label="activations at the peak")
    ax.plot(stages, [int(r["peak_memory_bytes"]) / GIB for r in kept], color="#C44E52", marker=".", lw=1.2,
            label="peak without output-tensor deallocation (Appendix B off)")
    cap = int(freed[0]["capacity_bytes"]) / GIB
    ax.axhline(cap, color="black", ls="--", lw=1)
    ax.text(stages[-1], cap + 1, "usable GPU memory %.1f GiB" % cap, ha="right", va="bottom", fontsize=8)
    ax.set_xlabel("pipeline rank (stage)")
    ax.set_ylabel("peak memory per GPU (GiB)")
    ax.set_xlim(-0.8, stages[-1] + 0.8)
    ax.set_ylim(0, max(cap, max(int(r["peak_memory_bytes"]) for r in kept) / GIB) * 1.32)
    ax.legend(fontsize=8, loc="upper left", ncol=2)
    ax.set_title("Memory by pipeline rank, 530B (like Korthikanti et al. 2022, Figure 9)")
    caption(fig, "`trainsim run scenarios/korthikanti-530b.json` (TP 8, PP 35, interleaved v 3, 280 micro-batches, "
                 "selective recompute + SP), profile %s; bars with the Appendix B output-tensor deallocation "
                 "(the default), line with --set training.deallocate_pipeline_outputs=false. Earlier ranks hold "
                 "more micro-batches in flight." % freed[0]["profile"])
    fig.subplots_adjust(left=0.07, right=0.99, top=0.92, bottom=0.2)
    save(fig, out, "memory_by_rank")


def bubble(data, out):
    rows = read_csv(data, "bubble_fraction.csv")
    fig, ax = plt.subplots(figsize=(8.5, 5.2))
    for schedule, color in (("1F1B", "#4C72B0"), ("interleaved", "#DD8452")):
        sr = [r for r in rows if r["schedule"] == schedule]
        m = [int(r["microbatches"]) for r in sr]
        p, v = int(sr[0]["p"]), int(sr[0]["v"])
        ax.plot(m, [float(r["simulated_bubble_fraction"]) for r in sr], "o-", color=color,
                label="%s (p=%d, v=%d): simulated" % (schedule, p, v))
        ax.plot(m, [float(r["analytic_bubble_fraction"]) for r in sr], "--", color=color,
                label="%s: analytic %s" % (schedule, "(p−1)/m" if v == 1 else "(p−1)/(v·m)"))
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted({int(r["microbatches"]) for r in rows}))
    ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.set_xlabel("micro-batches per pipeline per iteration, m")
    ax.set_ylabel("bubble fraction (pipeline idle time / busy time)")
    ax.set_ylim(0, None)
    ax.legend(fontsize=8)
    ax.set_title("Pipeline bubble vs micro-batches: 1F1B and interleaved")
    caption(fig, "`trainsim run` on scenarios/narayanan-gpt3-175b-96gpu.json and "
                 "narayanan-gpt3-175b-96gpu-interleaved.json (GPT-3 175B, TP 8, PP 12, full recompute, "
                 "micro-batch 1) with --set training.global_batch_size=m, profile %s. Simulated fraction: mean "
                 "bubble time over stages / (iteration time − bubble); dashed: Narayanan et al. 2021 §2.2."
            % rows[0]["profile"])
    fig.subplots_adjust(left=0.1, right=0.98, top=0.92, bottom=0.22)
    save(fig, out, "bubble_fraction")


def schedules(data, out):
    rows = [r for r in read_csv(data, "schedules.csv") if r["scenario"].endswith("korthikanti-175b.json")]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.6))
    labels = ["%s\n(v=%s)" % (r["schedule"], r["v"]) for r in rows]
    x = range(len(rows))
    left.bar(x, [float(r["bubble_s"]) * 1e3 for r in rows], color="#4C72B0")
    for i, r in enumerate(rows):
        left.annotate("%.1f%%" % (100 * float(r["bubble_fraction"])), (i, float(r["bubble_s"]) * 1e3),
                      ha="center", va="bottom", fontsize=8)
    left.set_xticks(list(x))
    left.set_xticklabels(labels, fontsize=7)
    left.set_ylabel("pipeline bubble per iteration (ms, mean over stages)")
    left.set_title("Bubble")
    static = [int(r["static_bytes"]) / GIB for r in rows]
    act = [int(r["activation_bytes"]) / GIB for r in rows]
    right.bar(x, static, color=COLORS["static"], label="weights, gradients, optimizer")
    right.bar(x, act, bottom=static, color=COLORS["activation"], label="activations")
    cap = int(rows[0]["capacity_bytes"]) / GIB
    right.axhline(cap, color="#C44E52", ls="--", lw=1, label="usable memory")
    for i, r in enumerate(rows):
        right.annotate("%s held" % r["microbatches_in_flight"], (i, static[i] + act[i]), ha="center",
                       va="bottom", fontsize=8)
    right.set_xticks(list(x))
    right.set_xticklabels(labels, fontsize=7)
    right.set_ylabel("peak memory of the fullest stage (GiB)")
    right.set_title("Peak memory")
    right.legend(fontsize=8, loc="lower right")
    caption(fig, "`trainsim run scenarios/korthikanti-175b.json --set schedule=S --set "
                 "parallelism.virtual_pipeline_model_parallel_size=v` (GPT-3 175B, TP 8, PP 8, SP, selective "
                 "recompute, %s micro-batches), profile %s. \"held\": (micro-batch, chunk)s holding activations "
                 "at the stage's peak. ZB and DualPipeV keep Megatron's synchronised optimizer step (no "
                 "post-validation); DualPipe(V)'s F&B pairs are not overlapped (dense); DualPipe holds two copies of the weights."
            % (rows[0]["microbatches"], rows[0]["profile"]), lines=3)
    fig.subplots_adjust(left=0.08, right=0.98, top=0.92, bottom=0.27, wspace=0.3)
    save(fig, out, "schedules")


RECOMPUTE_POLICIES = [
    ("none", "no recompute", "#8C8C8C"),
    ("selective", "selective", "#4C72B0"),
    ("full", "full", "#C44E52"),
    ("overlapped", "overlapped (heuristic plan)", "#55A868"),
    ("overlapped plan on demand", "same plan, on demand", "#B5D9A3"),
    ("overlapped, partitioned", "overlapped + partitioned", "#DD8452"),
]


def recompute_policies(data, out):
    rows = read_csv(data, "recompute_policies.csv")
    search = {r["scenario"]: r for r in read_csv(data, "recompute_search.csv")}
    scenarios = list(OrderedDict.fromkeys(r["scenario"] for r in rows))
    by = {(r["scenario"], r["policy"]): r for r in rows}
    n = len(RECOMPUTE_POLICIES)
    width = 0.8 / n
    fig, (ax_t, ax_m) = plt.subplots(2, 1, figsize=(14, 8.6), sharex=True)
    for g, sc in enumerate(scenarios):
        none_time = float(by[(sc, "none")]["iteration_time_s"])
        budget = int(by[(sc, "none")]["budget_bytes"]) / GIB
        ax_m.plot([g - 0.45, g + 0.45], [budget, budget], color="black", ls="--", lw=1.2)
        for j, (policy, _, color) in enumerate(RECOMPUTE_POLICIES):
            x = g + (j - (n - 1) / 2) * width
            r = by.get((sc, policy))
            if r is None:
                for ax, y in ((ax_t, 1.0), (ax_m, 2.0)):
                    ax.text(x, y, "not run", rotation=90, ha="center", va="bottom", fontsize=6.5, color="#777777")
                continue
            fits = r["fits_in_memory"] == "True"
            style = {} if fits else {"hatch": "////", "edgecolor": "black", "linewidth": 0.6}
            slowdown = 100.0 * (float(r["iteration_time_s"]) / none_time - 1.0)
            mem = int(r["peak_memory_bytes"]) / GIB
            ax_t.bar(x, slowdown, width, color=color, **style)
            ax_m.bar(x, mem, width, color=color, **style)
            if policy != "none":
                ax_t.text(x, max(slowdown, 0.0) + 0.8, "%+.1f" % slowdown if abs(slowdown) < 9.95 else "%+.0f" % slowdown,
                          rotation=90, ha="center", va="bottom", fontsize=6.5)
            ax_m.text(x, mem + 1.0, "%.1f" % mem if mem < 99.95 else "%.0f" % mem, rotation=90, ha="center", va="bottom", fontsize=6.5,
                      bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.6, "alpha": 0.85})
    ax_t.axhline(0, color="black", lw=0.8)
    ax_t.set_ylabel("iteration time over no recompute (%)")
    top = max(100.0 * (float(r["iteration_time_s"]) / float(by[(r["scenario"], "none")]["iteration_time_s"]) - 1.0)
              for r in rows)
    ax_t.set_ylim(-8, top * 1.25)
    ax_m.set_ylabel("peak memory per GPU (GiB)")
    ax_m.set_ylim(0, max(int(r["peak_memory_bytes"]) for r in rows) / GIB * 1.2)
    # Separate the two families of layouts.
    korth = [g for g, sc in enumerate(scenarios) if "lynx" not in sc]
    if korth and len(korth) < len(scenarios):
        for ax in (ax_t, ax_m):
            ax.axvline(max(korth) + 0.5, color="#555555", lw=0.8)
        ax_t.text((len(korth) - 1) / 2, top * 1.18, "Korthikanti layouts, budget = usable memory", ha="center",
                  va="top", fontsize=9, style="italic")
        ax_t.text((max(korth) + 1 + len(scenarios) - 1) / 2, top * 1.18,
                  "Lynx-like layouts, budget = training.recompute_memory_budget", ha="center", va="top", fontsize=9,
                  style="italic")
    labels = []
    for sc in scenarios:
        r = by[(sc, "none")]
        layout = "TP %s, PP %s%s" % (r["tp"], r["pp"], ", v %s" % r["v"] if r["v"] != "1" else "")
        labels.append("%s\n%s\nno recompute: %.2f s" % (os.path.basename(sc)[:-5], layout,
                                                          float(r["iteration_time_s"])))
    ax_m.set_xticks(range(len(scenarios)))
    ax_m.set_xticklabels(labels, fontsize=8)
    ax_m.set_xlim(-0.5, len(scenarios) - 0.5)
    for ax in (ax_t, ax_m):
        ax.grid(axis="x", visible=False)
    handles = [Patch(facecolor=c, label=l) for _, l, c in RECOMPUTE_POLICIES]
    handles += [Patch(facecolor="white", edgecolor="black", hatch="////", label="does not fit the budget"),
                Line2D([0], [0], color="black", ls="--", lw=1.2, label="memory budget per GPU")]
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.955), ncol=4, fontsize=8.5,
               frameon=False)
    fig.suptitle("Recomputation policies: iteration time and peak memory against the memory budget")
    caption(fig, "`trainsim recompute --partition` on scenarios/korthikanti-{22b,175b,530b}.json (budget: the "
                 "profile's usable memory, %.1f GiB) and on scenarios/lynx/*.json (32 GiB budget), profile %s. "
                 "Overlapped: the heuristic "
                 "scheduler's plan, recompute placed where the GPU waits; same plan on demand: without the overlap; "
                 "partitioned: layers per stage chosen with the plan. Bar labels: %% over no recompute, GiB."
            % (int(by[(scenarios[0], "none")]["budget_bytes"]) / GIB, rows[0]["profile"]))
    fig.subplots_adjust(left=0.06, right=0.99, top=0.86, bottom=0.17, hspace=0.08)
    save(fig, out, "recompute_policies")


def timeline(data, out):
    rows = read_csv(data, "timeline_excerpt.csv")
    with open(os.path.join(data, "timeline_excerpt_meta.json")) as f:
        meta = json.load(f)
    window_ms = meta["window_s"] * 1e3
    lanes = []
    for r in rows:
        lane = (int(r["stage"]), r["stream"])
        if lane not in lanes:
            lanes.append(lane)
    order = ["compute", "tp_comm", "pp_send_fwd", "pp_recv_fwd", "pp_send_bwd", "pp_recv_bwd", "dp_comm"]
    lanes.sort(key=lambda l: (l[0], order.index(l[1]) if l[1] in order else 99))
    fig, ax = plt.subplots(figsize=(13, 5.4))

    def color(r):
        if r["category"] == "compute":
            return COLORS["forward"] if r["phase"] == "forward" else COLORS["backward"]
        return COLORS.get(r["category"], "#999999")

    for i, lane in enumerate(lanes):
        y = len(lanes) - 1 - i
        for r in rows:
            if (int(r["stage"]), r["stream"]) != lane:
                continue
            s = max(0.0, float(r["start_ms"]))
            e = min(window_ms, float(r["start_ms"]) + float(r["duration_ms"]))
            if e > s:
                ax.broken_barh([(s, e - s)], (y - 0.4, 0.8), facecolors=color(r), edgecolor="white", linewidth=0.3)
    # Label each run of consecutive compute ops of one (phase, micro-batch, chunk) wider than 1.5 ms.
    blocks = []
    for r in rows:
        if r["stream"] != "compute" or r["microbatch"] == "":
            continue
        key = (int(r["stage"]), r["phase"], r["microbatch"], r["chunk"])
        s = max(0.0, float(r["start_ms"]))
        e = min(window_ms, float(r["start_ms"]) + float(r["duration_ms"]))
        if blocks and blocks[-1][0] == key and s - blocks[-1][2] < 0.5:
            blocks[-1][2] = max(blocks[-1][2], e)
        else:
            blocks.append([key, s, e])
    for (stage, phase, mb, chunk), s, e in blocks:
        if e - s > 1.5:
            y = len(lanes) - 1 - lanes.index((stage, "compute"))
            ax.text((s + e) / 2, y, "%s%s.c%s" % ("F" if phase == "forward" else "B", mb, chunk), ha="center",
                    va="center", fontsize=7, color="white", fontweight="bold")
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels(["stage %d %s" % l for l in reversed(lanes)], fontsize=8)
    ax.set_xlim(0, window_ms)
    ax.set_xlabel("time since the start of the excerpt (ms); excerpt starts %.3f s into the iteration"
                  % meta["window_start_s"])
    ax.grid(axis="y", visible=False)
    handles = [Patch(color=COLORS["forward"], label="forward compute"),
               Patch(color=COLORS["backward"], label="backward compute"),
               Patch(color=COLORS["recompute"], label="recompute"),
               Patch(color=COLORS["tp_comm"], label="tensor-parallel collective"),
               Patch(color=COLORS["pp_comm"], label="pipeline send/receive")]
    ax.legend(handles=handles, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=5)
    ax.set_title("Timeline excerpt: %.0f ms of pipeline stages 0 and 1 in steady state" % window_ms)
    caption(fig, "From `trainsim run %s --trace FILE` (GPT-3 175B, TP 8, PP 8, %s schedule with v 3, selective "
                 "recompute + SP), profile %s; one lane per stream of the simulated GPU of each stage. Labels "
                 "F/B<micro-batch>.c<chunk>: the forward or backward of that micro-batch on that model chunk. "
                 "The whole trace opens in ui.perfetto.dev." % (meta["scenario"], meta["schedule"], meta["profile"]))
    fig.subplots_adjust(left=0.12, right=0.975, top=0.93, bottom=0.24)
    save(fig, out, "timeline_excerpt")


TIME_PARTS = [
    ("compute_s", "compute", "#4C72B0"),
    ("recompute_s", "recompute", "#C44E52"),
    ("optimizer_s", "optimizer", "#8C8C8C"),
    ("variability_s", "GPU variability", "#DA8BC3"),
    ("exposed_tp_comm_s", "exposed TP comm", "#8172B3"),
    ("exposed_pp_comm_s", "exposed PP comm", "#55A868"),
    ("exposed_dp_comm_s", "exposed DP comm", "#937860"),
    ("host_s", "host (CPU-bound)", "#CCB974"),
    ("bubble_s", "pipeline bubble", "#DDDDDD"),
]


def time_by_gpu_count(data, out):
    rows = read_csv(data, "time_by_gpu_count.csv")
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 6.2), gridspec_kw={"width_ratios": [3, 2]})
    x = list(range(len(rows)))
    bottom = [0.0] * len(rows)
    for key, label, color in TIME_PARTS:
        share = [float(r[key]) / float(r["iteration_time_s"]) for r in rows]
        ax.bar(x, share, bottom=bottom, color=color, label=label, width=0.8)
        bottom = [b + s for b, s in zip(bottom, share)]
    ax.set_xticks(x)
    ax.set_xticklabels(["%s\np%s\nd%s" % (r["gpus"], r["p"], r["d"]) for r in rows], fontsize=7)
    ax.set_xlabel("GPUs (TP 8 × pipeline p × data-parallel d)")
    ax.set_ylabel("share of the iteration time (mean over stages)")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.75, -0.2), ncol=5)
    ax.set_title("Where the time goes, GPT-3 175B")
    gpus = [int(r["gpus"]) for r in rows]
    added = [100.0 * (float(r["iteration_time_s"]) / float(r["iteration_time_before_s"]) - 1.0) for r in rows]
    ax2.plot(gpus, added, "o-", color="#C44E52")
    ax2.set_xscale("log", base=2)
    ax2.set_xlabel("GPUs")
    ax2.set_ylabel("iteration time added by issue-19 mechanisms (%)")
    ax2.set_ylim(0, None)
    ax2.set_title("Cost of the mechanisms")
    caption(fig, "`trainsim run scenarios/%s.json` (GPT-3 175B, TP 8, full recompute, 1F1B, micro-batch 1) with "
                 "--set parallelism.pipeline_model_parallel_size=p, data_parallel_size=d, global_batch_size=%s·d, "
                 "and parallelism.overlap_p2p_comm=false, batch_p2p_sync=true, variability.mode=expected; "
                 "profile %s. Right: against the same runs without those three settings."
            % ("narayanan-gpt3-175b-96gpu", rows[0]["microbatches"], rows[0]["profile"]))
    fig.subplots_adjust(left=0.07, right=0.98, top=0.93, bottom=0.33, wspace=0.25)
    save(fig, out, "time_by_gpu_count")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--only", help="draw this one figure")
    args = parser.parse_args()
    draws = (per_layer, activation_shares, memory_by_rank, bubble, recompute_policies, timeline,
             time_by_gpu_count, schedules)
    for draw in draws:
        if not args.only or draw.__name__ == args.only:
            draw(args.data, args.out)


if __name__ == "__main__":
    main()
