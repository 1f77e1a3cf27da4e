#include "sim/program/variability.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace trainsim::program {
namespace {

// SplitMix64 (Steele, Lea and Flood, OOPSLA 2014): a well-mixed 64-bit value from a counter.
std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

// A uniform double in (0, 1) from the top 53 bits.
double open_unit(std::uint64_t bits) {
    return (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53;
}

}  // namespace

double expected_max_standard_normal(std::int64_t n) {
    if (n <= 1) {
        return 0.0;
    }
    // The density of the maximum, n·φ(x)·Φ(x)^(n−1), lies within [−9, 9] for any n a cluster has
    // (its mode grows like √(2 ln n) < 6 for n < 2^50); the trapezoid rule on a 1e-3 grid is exact to
    // about 1e-9 for this smooth, rapidly decaying integrand.
    constexpr double lo = -9.0, hi = 9.0, step = 1e-3;
    const double dn = static_cast<double>(n);
    double sum = 0.0;
    for (double x = lo; x <= hi; x += step) {
        const double phi = std::exp(-0.5 * x * x) / std::sqrt(2.0 * std::numbers::pi);
        const double cdf = 0.5 * std::erfc(-x / std::numbers::sqrt2);
        // Φ^(n−1) through logs: for n in the millions a direct power underflows gracefully either way.
        const double tail = cdf > 0.0 ? std::exp((dn - 1.0) * std::log(cdf)) : 0.0;
        sum += x * dn * phi * tail;
    }
    return sum * step;
}

namespace {

// Box–Muller on two uniforms derived from `key`.
double normal_from_key(std::uint64_t key) {
    const double u1 = open_unit(splitmix64(key));
    const double u2 = open_unit(splitmix64(key ^ 0xD1B54A32D192ED03ULL));
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace

double standard_normal_draw(std::int64_t seed, std::int64_t rank) {
    return normal_from_key(splitmix64(static_cast<std::uint64_t>(seed)) ^ static_cast<std::uint64_t>(rank));
}

double kernel_jitter_factor(double stddev, std::int64_t seed, std::int64_t rank, std::int64_t list,
                            std::int64_t op) {
    // Each coordinate goes through the mixer before the next is folded in, so that (rank, list, op)
    // triples that sum or xor alike still draw apart; the odd constant keeps these draws apart from
    // the per-GPU draws of the same seed and rank.
    std::uint64_t key = splitmix64(static_cast<std::uint64_t>(seed) ^ 0xA0761D6478BD642FULL);
    key = splitmix64(key ^ static_cast<std::uint64_t>(rank));
    key = splitmix64(key ^ static_cast<std::uint64_t>(list));
    key ^= static_cast<std::uint64_t>(op);
    return std::max(0.5, 1.0 + stddev * normal_from_key(key));
}

double compute_slowdown(const config::VariabilityConfig& variability, double stddev,
                        const parallel::Layout& layout, const Fold& fold, const parallel::Coordinates& at) {
    const std::int64_t t = fold.tensor ? layout.tensor_size() : 1;
    const std::int64_t d = fold.data ? layout.data_size() : 1;
    const std::int64_t c = layout.context_size();  // context-parallel ranks are always folded
    switch (variability.mode) {
    case config::VariabilityMode::Off:
        return 1.0;
    case config::VariabilityMode::Expected:
        return 1.0 + stddev * expected_max_standard_normal(t * d * c);
    case config::VariabilityMode::Sampled: {
        double slowest = -std::numeric_limits<double>::infinity();
        for (std::int64_t dp = 0; dp < d; ++dp) {
            for (std::int64_t cp = 0; cp < c; ++cp) {
                for (std::int64_t tp = 0; tp < t; ++tp) {
                    const parallel::Coordinates member{fold.tensor ? tp : at.tp, fold.data ? dp : at.dp,
                                                       at.pp, cp};
                    slowest =
                        std::max(slowest, standard_normal_draw(variability.seed, layout.global_rank(member)));
                }
            }
        }
        // A draw far in the fast tail must not make a kernel free: no GPU runs at more than twice the
        // median speed.
        return std::max(0.5, 1.0 + stddev * slowest);
    }
    }
    return 1.0;
}

}  // namespace trainsim::program
