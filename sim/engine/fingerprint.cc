#include "sim/engine/fingerprint.h"

#include <cstdio>

namespace trainsim::engine {
namespace {

constexpr std::uint64_t kOffset = 0xcbf29ce484222325ULL;
constexpr std::uint64_t kPrime = 0x100000001b3ULL;

void mix(std::uint64_t& h, std::uint64_t value) {
    for (int byte = 0; byte < 8; ++byte) {
        h ^= (value >> (8 * byte)) & 0xffU;
        h *= kPrime;
    }
}

}  // namespace

std::uint64_t fingerprint(const RunResult& run) {
    std::uint64_t h = kOffset;
    for (std::size_t t = 0; t < run.timings.size(); ++t) {
        mix(h, t);
        mix(h, static_cast<std::uint64_t>(run.timings[t].start.ns()));
        mix(h, static_cast<std::uint64_t>(run.timings[t].end.ns()));
    }
    mix(h, static_cast<std::uint64_t>(run.makespan.ns()));
    return h;
}

std::string fingerprint_hex(const RunResult& run) {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(fingerprint(run)));
    return text;
}

}  // namespace trainsim::engine
