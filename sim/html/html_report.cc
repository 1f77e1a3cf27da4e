#include "sim/html/html_report.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace trainsim::html {

namespace {

std::string escaped(const std::string& text) {
    std::string out;
    for (const char c : text) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

std::string fmt(const char* format, double v) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, format, v);
    return buffer;
}

struct Part {
    const char* name;
    const char* color;
    double value;
};

// The same colours as results/plot_figures.py where the kinds overlap.
std::vector<Part> breakdown_parts(const report::Breakdown& b) {
    std::vector<Part> parts{{"compute", "#4C72B0", b.compute.value},
                            {"recompute", "#C44E52", b.recompute.value},
                            {"optimizer", "#937860", b.optimizer.value},
                            {"exposed TP comm", "#8172B3", b.exposed_tp_comm.value},
                            {"exposed PP comm", "#55A868", b.exposed_pp_comm.value},
                            {"exposed DP comm", "#DA8BC3", b.exposed_dp_comm.value},
                            {"bubble", "#BBBBBB", b.bubble.value},
                            {"host", "#CCB974", b.host.value},
                            {"variability", "#64B5CD", b.variability.value}};
    // Only runs with the knobs, or with context or expert parallelism, have these; the others keep their
    // legend. (Kernel jitter's net time can be negative: a bar only when it added time.)
    if (b.param_copy.value > 0) {
        parts.push_back({"fp32->bf16 param copy", "#A6761D", b.param_copy.value});
    }
    if (b.grad_zeroing.value > 0) {
        parts.push_back({"grad buffer zeroing", "#666666", b.grad_zeroing.value});
    }
    if (b.kernel_jitter.value > 0) {
        parts.push_back({"kernel jitter", "#1B9E77", b.kernel_jitter.value});
    }
    if (b.overlap_contention.value > 0) {
        parts.push_back({"overlap contention", "#E7298A", b.overlap_contention.value});
    }
    if (b.exposed_cp_comm.value > 0) {
        parts.push_back({"exposed CP comm", "#8C613C", b.exposed_cp_comm.value});
    }
    if (b.exposed_ep_comm.value > 0) {
        parts.push_back({"exposed EP comm", "#DD8452", b.exposed_ep_comm.value});
    }
    return parts;
}

// Horizontal stacked bars, one per row label, with a legend below; `scale_max` is the full width.
void stacked_bars(std::ostream& out, const std::vector<std::pair<std::string, std::vector<Part>>>& rows,
                  double scale_max, const char* unit_format, double unit) {
    constexpr double kLabel = 110, kPlot = 560, kRow = 18, kLegendRow = 18;
    const std::vector<Part>& first = rows.front().second;
    // Legend columns as wide as the longest name needs (about 6.5 px per character of the 11 px font),
    // so that "weights, gradients, optimizer" does not run into the next entry; at most five per row.
    std::size_t longest_name = 0;
    for (const Part& p : first) {
        longest_name = std::max(longest_name, std::string(p.name).size());
    }
    const double legend_column = std::max(120.0, 24.0 + 6.5 * static_cast<double>(longest_name));
    const std::size_t per_row =
        std::clamp<std::size_t>(static_cast<std::size_t>((kPlot + 90) / legend_column), 1, 5);
    const double legend_rows = static_cast<double>((first.size() + per_row - 1) / per_row);
    const double height = kRow * static_cast<double>(rows.size()) + 24 + kLegendRow * legend_rows;
    out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kLabel + kPlot + 90 << "\" height=\""
        << height << "\" font-size=\"11\">\n";
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const double y = kRow * static_cast<double>(r);
        out << "<text x=\"" << kLabel - 6 << "\" y=\"" << y + 13 << "\" text-anchor=\"end\">"
            << escaped(rows[r].first) << "</text>\n";
        double x = kLabel;
        double total = 0.0;
        for (const Part& p : rows[r].second) {
            const double w = scale_max > 0 ? p.value / scale_max * kPlot : 0.0;
            if (w > 0) {
                out << "<rect x=\"" << fmt("%.2f", x) << "\" y=\"" << y + 2 << "\" width=\"" << fmt("%.2f", w)
                    << "\" height=\"" << kRow - 4 << "\" fill=\"" << p.color << "\"><title>"
                    << escaped(p.name) << ": " << fmt(unit_format, p.value * unit) << "</title></rect>\n";
            }
            x += w;
            total += p.value;
        }
        out << "<text x=\"" << fmt("%.2f", x + 4) << "\" y=\"" << y + 13 << "\">"
            << fmt(unit_format, total * unit) << "</text>\n";
    }
    for (std::size_t i = 0; i < first.size(); ++i) {
        const double x = kLabel + static_cast<double>(i % per_row) * legend_column;
        const double y =
            kRow * static_cast<double>(rows.size()) + 10 + kLegendRow * static_cast<double>(i / per_row);
        out << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"10\" height=\"10\" fill=\""
            << first[i].color << "\"/><text x=\"" << x + 14 << "\" y=\"" << y + 9 << "\">"
            << escaped(first[i].name) << "</text>\n";
    }
    out << "</svg>\n";
}

void row(std::ostream& out, const std::string& key, const std::string& value) {
    out << "<tr><th>" << escaped(key) << "</th><td>" << escaped(value) << "</td></tr>\n";
}

}  // namespace

void write_html_report(std::ostream& out, const whatif::WhatIf& w) {
    const report::IterationReport& r = w.baseline;
    out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>trainsim: "
        << escaped(r.name) << "</title>\n<style>\nbody{font-family:sans-serif;margin:2em;max-width:60em}"
        << "table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:2px "
           "8px;text-align:left}"
        << "td.n{text-align:right}\n</style>\n</head>\n<body>\n";
    out << "<h1>" << escaped(r.name) << "</h1>\n";

    out << "<section id=\"summary\">\n<h2>Summary</h2>\n<table>\n";
    row(out, "iteration time", fmt("%.4f s", r.iteration_time.value));
    row(out, "MFU", fmt("%.1f %%", 100.0 * r.mfu));
    row(out, "TFLOP/s per GPU", fmt("%.1f", r.tflops_per_gpu));
    row(out, "tokens/s", fmt("%.0f", r.tokens_per_s));
    row(out, "GPUs", std::to_string(r.num_gpus) + " (simulated " + std::to_string(r.simulated_gpus) + ")");
    row(out, "schedule",
        r.schedule + ", " + std::to_string(r.num_microbatches) + " micro-batches per pipeline");
    row(out, "profile", r.profile);
    row(out, "peak memory",
        fmt("%.2f GiB", to_gib(r.peak_memory_bytes)) + " of " +
            fmt("%.2f GiB", to_gib(r.memory_capacity_bytes)) +
            (r.fits_in_memory ? " (fits)" : " (does not fit)"));
    out << "</table>\n</section>\n";

    out << "<section id=\"breakdown\">\n<h2>Where the time goes, per pipeline stage</h2>\n";
    std::vector<std::pair<std::string, std::vector<Part>>> time_rows;
    double longest = 0.0;
    for (const report::StageReport& s : r.stages) {
        time_rows.emplace_back("stage " + std::to_string(s.stage), breakdown_parts(s.time));
        longest = std::max(longest, s.time.total().value);
    }
    if (!time_rows.empty()) {
        stacked_bars(out, time_rows, longest, "%.3f s", 1.0);
    }
    out << "</section>\n";

    out << "<section id=\"memory\">\n<h2>Peak memory per stage</h2>\n";
    std::vector<std::pair<std::string, std::vector<Part>>> memory_rows;
    double largest = static_cast<double>(r.memory_capacity_bytes.value);
    for (const report::StageReport& s : r.stages) {
        memory_rows.emplace_back(
            "stage " + std::to_string(s.stage),
            std::vector<Part>{
                {"weights, gradients, optimizer", "#4C72B0", static_cast<double>(s.static_bytes.value)},
                {"activations", "#DD8452", static_cast<double>(s.activation_bytes.value)}});
        largest = std::max(largest, static_cast<double>(s.peak_memory_bytes.value));
    }
    if (!memory_rows.empty()) {
        stacked_bars(out, memory_rows, largest, "%.2f GiB", 1.0 / kBytesPerGiB);
    }
    out << "<p>Usable memory: " << fmt("%.2f GiB", to_gib(r.memory_capacity_bytes))
        << " per GPU.</p>\n</section>\n";

    const report::CriticalPath& path = w.critical_path;
    out << "<section id=\"critical-path\">\n<h2>Critical path</h2>\n<p>" << fmt("%.4f s", path.length.value)
        << " over " << path.tasks << " tasks on " << path.gpus.size()
        << " GPU(s); biggest share: " << escaped(path.biggest_share()) << ".</p>\n";
    const report::CriticalPathShares& c = path.shares;
    stacked_bars(out,
                 {{"critical path",
                   {{"compute", "#4C72B0", c.compute.value},
                    {"recompute", "#C44E52", c.recompute.value},
                    {"optimizer", "#937860", c.optimizer.value},
                    {"TP comm", "#8172B3", c.tp_comm.value},
                    {"PP comm", "#55A868", c.pp_comm.value},
                    {"DP comm", "#DA8BC3", c.dp_comm.value},
                    {"host", "#CCB974", c.host.value},
                    {"waiting", "#BBBBBB", c.wait.value}}}},
                 path.length.value, "%.3f s", 1.0);
    out << "<table>\n<tr><th>GPU</th><th>time on the path</th></tr>\n";
    for (std::size_t i = 0; i < path.gpus.size() && i < 10; ++i) {
        const report::CriticalGpu& g = path.gpus[i];
        out << "<tr><td>stage " << g.stage << " tp " << g.tp << " dp " << g.dp << "</td><td class=\"n\">"
            << fmt("%.3f s", g.time.value) << "</td></tr>\n";
    }
    out << "</table>\n</section>\n";

    out << "<section id=\"whatif\">\n<h2>What if</h2>\n<p>Ranked by GPU-seconds per iteration saved (the "
           "iteration time where the GPU count stays).</p>\n<table>\n<tr><th>rank</th><th>variation</th>"
           "<th>iteration time</th><th>change</th><th>GPUs</th><th>peak memory "
           "change</th><th>memory</th></tr>\n";
    int rank = 0;
    for (const whatif::Sensitivity& s : w.rows) {
        out << "<tr><td class=\"n\">" << ++rank << "</td><td>" << escaped(s.label) << "</td>";
        if (!s.error.empty()) {
            out << "<td colspan=\"5\">not simulated: " << escaped(s.error) << "</td></tr>\n";
            continue;
        }
        out << "<td class=\"n\">" << fmt("%.4f s", s.iteration_time.value) << "</td><td class=\"n\">"
            << fmt("%+.2f %%", 100.0 * s.change) << "</td><td class=\"n\">" << s.num_gpus
            << "</td><td class=\"n\">" << fmt("%+.2f GiB", to_gib(s.peak_change)) << "</td><td>"
            << (s.fits_in_memory ? "fits" : "does not fit by " + fmt("%.2f GiB", to_gib(s.overflow)))
            << "</td></tr>\n";
    }
    out << "</table>\n</section>\n</body>\n</html>\n";
}

}  // namespace trainsim::html
