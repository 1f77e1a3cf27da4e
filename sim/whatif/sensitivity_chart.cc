#include "sim/whatif/sensitivity_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace trainsim::whatif {

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

std::string num(double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f", v);
    return buffer;
}

}  // namespace

void write_svg_chart(std::ostream& out, const WhatIf& result) {
    // Layout in pixels: labels on the left, the bars' axis in the middle of the plot area.
    constexpr double kLabelWidth = 260, kPlotWidth = 480, kRight = 90, kRow = 22, kTop = 48, kBottom = 30;
    std::vector<const Sensitivity*> rows;
    for (const Sensitivity& s : result.rows) {
        if (s.error.empty()) {
            rows.push_back(&s);
        }
    }
    double extent = 0.0;  // the largest |change| in percent, the half-width of the plot
    for (const Sensitivity* s : rows) {
        extent = std::max(extent, std::abs(s->change) * 100.0);
    }
    extent = extent > 0.0 ? extent * 1.05 : 1.0;
    const double width = kLabelWidth + kPlotWidth + kRight;
    const double height = kTop + kRow * static_cast<double>(rows.size()) + kBottom;
    const double axis = kLabelWidth + kPlotWidth / 2.0;
    const double scale = (kPlotWidth / 2.0) / extent;  // pixels per percent

    out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\"" << num(height)
        << "\" viewBox=\"0 0 " << num(width) << " " << num(height)
        << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    out << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    char title[256];
    std::snprintf(title, sizeof title, "%s: iteration time change (baseline %.3f s)",
                  result.baseline.name.c_str(), result.baseline.iteration_time.value);
    out << "<text x=\"" << num(width / 2) << "\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">"
        << escaped(title) << "</text>\n";
    out << "<text x=\"" << num(width / 2) << "\" y=\"38\" text-anchor=\"middle\" fill=\"#555\">"
        << escaped("critical path's biggest share: " + result.critical_path.biggest_share() +
                   "; left of the axis is faster")
        << "</text>\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Sensitivity& s = *rows[i];
        const double y = kTop + kRow * static_cast<double>(i);
        const double percent = s.change * 100.0;
        const double length = std::abs(percent) * scale;
        const double x = percent < 0 ? axis - length : axis;
        out << "<text x=\"" << num(kLabelWidth - 8) << "\" y=\"" << num(y + 15) << "\" text-anchor=\"end\">"
            << escaped(s.label) << "</text>\n";
        out << "<rect x=\"" << num(x) << "\" y=\"" << num(y + 4) << "\" width=\""
            << num(std::max(length, 0.5)) << "\" height=\"" << num(kRow - 8) << "\" fill=\""
            << (percent < 0 ? "#2a9d5c" : "#d1495b") << (s.fits_in_memory ? "" : "\" fill-opacity=\"0.4")
            << "\"/>\n";
        char value[64];
        std::snprintf(value, sizeof value, "%+.2f %%%s", percent, s.fits_in_memory ? "" : " (OOM)");
        const double text_x = percent < 0 ? axis + 4 : axis + length + 4;
        out << "<text x=\"" << num(text_x) << "\" y=\"" << num(y + 15) << "\">" << escaped(value)
            << "</text>\n";
    }
    out << "<line x1=\"" << num(axis) << "\" y1=\"" << num(kTop) << "\" x2=\"" << num(axis) << "\" y2=\""
        << num(height - kBottom) << "\" stroke=\"black\"/>\n";
    out << "</svg>\n";
}

}  // namespace trainsim::whatif
