#include "sim/report/trace_selection.h"

#include <charconv>
#include <cstdint>
#include <limits>

#include "sim/core/input_error.h"
#include "sim/parallel/layout.h"

namespace trainsim::report {

namespace {

std::int64_t parse_rank(const std::string& whole, const std::string& part) {
    std::int64_t n = -1;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), n);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || n < 0) {
        throw InputError("--trace-ranks=" + whole + ": '" + part +
                         "' is not a rank (a list of ranks and ranges: 0-7,64)");
    }
    return n;
}

double parse_seconds(const std::string& whole, const std::string& part) {
    double v = 0.0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec != std::errc() || end != part.data() + part.size() || !(v >= 0.0)) {
        throw InputError("--trace-window=" + whole + ": '" + part +
                         "' is not a time ≥ 0 in seconds (START:END, either may be left out)");
    }
    return v;
}

}  // namespace

std::vector<std::pair<std::int64_t, std::int64_t>> parse_trace_ranks(const std::string& text,
                                                                     std::int64_t world) {
    std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = text.find(',', start);
        const std::string part =
            text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        const std::size_t dash = part.find('-');
        const std::int64_t first = parse_rank(text, part.substr(0, dash));
        const std::int64_t last = dash == std::string::npos ? first : parse_rank(text, part.substr(dash + 1));
        if (last < first || last >= world) {
            throw InputError("--trace-ranks=" + text + ": '" + part + "' must be ranks in [0, " +
                             std::to_string(world - 1) + "], low to high");
        }
        ranges.emplace_back(first, last);
        if (comma == std::string::npos) {
            break;
        }
        start = comma + 1;
    }
    return ranges;
}

std::vector<bool> select_trace_ranks(const std::string& text, const config::Scenario& scenario,
                                     const program::IterationProgram& program) {
    const parallel::Layout layout(scenario);
    const auto ranges = parse_trace_ranks(text, layout.world_size());
    std::vector<bool> keep(program.gpus.size(), false);
    bool any = false;
    std::string simulated;
    for (std::size_t g = 0; g < program.gpus.size(); ++g) {
        const std::int64_t rank = layout.global_rank(program.gpus[g].coordinates);
        for (const auto& [first, last] : ranges) {
            keep[g] = keep[g] || (rank >= first && rank <= last);
        }
        any = any || keep[g];
        if (g < 8) {
            simulated += (g == 0 ? "" : ", ") + std::to_string(rank);
        }
    }
    if (!any) {
        throw InputError("--trace-ranks=" + text + " selects none of the simulated GPUs (ranks " + simulated +
                         (program.gpus.size() > 8 ? ", ..." : "") + "; --fold none simulates every rank)");
    }
    return keep;
}

std::pair<SimTime, SimTime> parse_trace_window(const std::string& text) {
    const std::size_t colon = text.find(':');
    if (colon == std::string::npos) {
        throw InputError("--trace-window=" + text + " must be START:END in seconds (either may be left out)");
    }
    const std::string a = text.substr(0, colon);
    const std::string b = text.substr(colon + 1);
    const SimTime start = a.empty() ? SimTime{} : to_sim_time(Seconds{parse_seconds(text, a)});
    const SimTime end = b.empty() ? SimTime::max() : to_sim_time(Seconds{parse_seconds(text, b)});
    if (end < start) {
        throw InputError("--trace-window=" + text + ": END must not be before START");
    }
    return {start, end};
}

}  // namespace trainsim::report
