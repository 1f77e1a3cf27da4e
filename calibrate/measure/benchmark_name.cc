#include "calibrate/measure/benchmark_name.h"

#include <array>

namespace trainsim::calibrate {

namespace {

// What Google Benchmark adds to a registered name: bare words and key:value settings.
constexpr std::array<std::string_view, 4> kAddedWords = {"manual_time", "real_time", "process_time",
                                                         "UseRealTime"};
constexpr std::array<std::string_view, 5> kAddedKeys = {"iterations", "repeats", "min_time",
                                                        "min_warmup_time", "threads"};

template <std::size_t N> bool contains(const std::array<std::string_view, N>& list, std::string_view s) {
    for (const auto item : list) {
        if (item == s) {
            return true;
        }
    }
    return false;
}

}  // namespace

std::string BenchmarkName::text() const {
    std::string out = family;
    for (const auto& [key, value] : fields) {
        out += "/" + key + ":" + value;
    }
    return out;
}

BenchmarkName gemm_benchmark_name(const cost::GemmShape& shape, cost::GemmClass cls,
                                  const std::string& dtype) {
    return {"gemm",
            {{"m", std::to_string(shape.m)},
             {"n", std::to_string(shape.n)},
             {"k", std::to_string(shape.k)},
             {"batch", std::to_string(shape.batch)},
             {"class", to_string(cls)},
             {"dtype", dtype}}};
}

BenchmarkName kernel_benchmark_name(KernelKind kind, std::int64_t bytes_moved, const std::string& dtype) {
    return {"kernel", {{"kind", to_string(kind)}, {"bytes", std::to_string(bytes_moved)}, {"dtype", dtype}}};
}

BenchmarkName collective_benchmark_name(cost::CollectiveKind op, int ranks, int nodes, std::int64_t bytes,
                                        const std::string& dtype) {
    return {"collective",
            {{"op", cost::to_string(op)},
             {"ranks", std::to_string(ranks)},
             {"nodes", std::to_string(nodes)},
             {"bytes", std::to_string(bytes)},
             {"dtype", dtype}}};
}

BenchmarkName parse_benchmark_name(std::string_view name) {
    BenchmarkName out;
    std::size_t start = 0;
    bool first = true;
    while (start <= name.size()) {
        const std::size_t slash = name.find('/', start);
        const std::string_view segment =
            name.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
        start = slash == std::string_view::npos ? name.size() + 1 : slash + 1;
        if (first) {
            out.family = std::string(segment);
            first = false;
            continue;
        }
        const std::size_t colon = segment.find(':');
        if (colon == std::string_view::npos) {
            if (!contains(kAddedWords, segment)) {
                return {};
            }
            continue;
        }
        const std::string_view key = segment.substr(0, colon);
        if (contains(kAddedKeys, key)) {
            continue;
        }
        out.fields.emplace_back(std::string(key), std::string(segment.substr(colon + 1)));
    }
    return out;
}

}  // namespace trainsim::calibrate
