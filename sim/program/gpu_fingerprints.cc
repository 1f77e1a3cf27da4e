#include "sim/program/gpu_fingerprints.h"

#include <algorithm>
#include <numeric>

namespace trainsim::program {
namespace {

constexpr std::uint64_t kOffset = 0xcbf29ce484222325ULL;
constexpr std::uint64_t kPrime = 0x100000001b3ULL;

void mix_into(std::uint64_t& h, std::uint64_t value) {
    for (int byte = 0; byte < 8; ++byte) {
        h ^= (value >> (8 * byte)) & 0xffU;
        h *= kPrime;
    }
}

}  // namespace

std::vector<std::uint64_t> gpu_fingerprints(const IterationProgram& program, const engine::RunResult& run) {
    std::vector<std::uint64_t> hashes(program.gpus.size(), kOffset);
    std::vector<std::size_t> order;
    // A program is built one GPU at a time, so each GPU's tasks are runs of consecutive ids.
    for (const TaskInfoTable::GpuRun& r : program.info.runs()) {
        order.resize(r.end - r.first);
        std::iota(order.begin(), order.end(), r.first);
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return run.timings[a].end < run.timings[b].end;
        });
        std::uint64_t& h = hashes[r.gpu.index()];
        for (const std::size_t t : order) {
            mix_into(h, t);
            mix_into(h, static_cast<std::uint64_t>(run.timings[t].start.ns()));
            mix_into(h, static_cast<std::uint64_t>(run.timings[t].end.ns()));
        }
    }
    return hashes;
}

}  // namespace trainsim::program
