#include "sim/workload/tp_comm_overlap.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainsim::workload {
namespace {

// The ring-exchange all-gathers and the GEMM each feeds (transformer_layer.cc's names).
struct GatherPair {
    std::string_view gather;
    std::string_view gemm;
};
constexpr std::array<GatherPair, 6> kRingExchange = {{{"ln1.allgather", "qkv"},
                                                      {"rmsnorm1.allgather", "qkv"},
                                                      {"ln2.allgather", "fc1"},
                                                      {"rmsnorm2.allgather", "fc1"},
                                                      {"proj.grad_allgather", "proj.dgrad"},
                                                      {"fc2.grad_allgather", "fc2.dgrad"}}};
// The pipelined reduce-scatters and the GEMM that produces each.
struct ScatterPair {
    std::string_view gemm;
    std::string_view scatter;
};
constexpr std::array<ScatterPair, 2> kPipeline = {
    {{"proj", "proj.reducescatter"}, {"fc2", "fc2.reducescatter"}}};
// TE's defaults (transformer_engine/pytorch/module/base.py initialize_ub): the pipeline method splits
// the GEMM in 4 and its reduce-scatter kernels hold 16 SMs; the ring exchange moves data with the copy
// engines (use_ce) and holds 1 SM.
constexpr std::int64_t kPipelineSplits = 4;
constexpr int kPipelineSms = 16;
constexpr int kRingExchangeSms = 1;

std::optional<std::string_view> ring_gemm_of(const Op& op) {
    if (op.kind != OpKind::Collective || op.collective != cost::CollectiveKind::AllGather || !op.blocking) {
        return std::nullopt;
    }
    for (const GatherPair& p : kRingExchange) {
        if (op.name == p.gather) {
            return p.gemm;
        }
    }
    return std::nullopt;
}

bool is_pipelined_scatter(const Op& op, const Op& before) {
    if (op.kind != OpKind::Collective || op.collective != cost::CollectiveKind::ReduceScatter ||
        !op.blocking || before.kind != OpKind::Gemm) {
        return false;
    }
    return std::any_of(kPipeline.begin(), kPipeline.end(),
                       [&](const ScatterPair& p) { return op.name == p.scatter && before.name == p.gemm; });
}

// Share `i` of `n` near-equal shares of `total` (the first total % n shares one larger).
std::int64_t share(std::int64_t total, std::int64_t n, std::int64_t i) {
    return total / n + (i < total % n ? 1 : 0);
}

class Rewriter {
public:
    Rewriter(const OpList& in, std::int64_t tp) : in_(in), tp_(tp), index_(in.size(), -1) {}

    OpList run() {
        for (std::size_t i = 0; i < in_.size(); ++i) {
            if (const auto gemm = ring_gemm_of(in_[i])) {
                i = ring_exchange(i, *gemm);
                continue;
            }
            if (i + 1 < in_.size() && is_pipelined_scatter(in_[i + 1], in_[i])) {
                pipeline(i);
                ++i;
                continue;
            }
            Op op = in_[i];
            remap(op.after);
            if (op.host_waits_for >= 0) {  // the MoE dispatcher's wait (TP overlap is refused with MoE)
                op.host_waits_for = index_[static_cast<std::size_t>(op.host_waits_for)];
            }
            push(i, std::move(op));
        }
        return std::move(out_);
    }

private:
    void remap(std::vector<std::int32_t>& after) const {
        for (std::int32_t& a : after) {
            a = index_[static_cast<std::size_t>(a)];
        }
    }

    std::int32_t push(std::size_t original, Op op) {
        const auto at = static_cast<std::int32_t>(out_.size());
        out_.push_back(std::move(op));
        index_[original] = at;
        return at;
    }

    std::int32_t append(Op op) {
        out_.push_back(std::move(op));
        return static_cast<std::int32_t>(out_.size() - 1);
    }

    static Op chunk_of(const Op& gemm, std::int64_t tokens, int k) {
        Op c = gemm;
        c.name = gemm.name + ".chunk" + std::to_string(k);
        c.gemm.m = tokens;
        if (k > 0) {
            c.saved_bytes = Bytes{0};  // the whole GEMM's saved input is counted once, on chunk 0
        }
        return c;
    }

    // The all-gather at `g` feeds GEMM `name` further down the list. Compute ops between them (FP8 cast
    // kernels) run first: TE casts before it gathers. Returns the GEMM's index in the input.
    std::size_t ring_exchange(std::size_t g, std::string_view name) {
        std::size_t j = g + 1;
        while (j < in_.size() && !(in_[j].kind == OpKind::Gemm && in_[j].name == name)) {
            if (in_[j].kind == OpKind::Collective) {
                throw std::logic_error("overlap_tp_comm: a collective between " + in_[g].name + " and " +
                                       std::string(name));
            }
            ++j;
        }
        if (j == in_.size()) {
            throw std::logic_error("overlap_tp_comm: no " + std::string(name) + " after " + in_[g].name);
        }
        const auto gather = static_cast<std::int32_t>(g);
        const auto drop_gather = [&](std::vector<std::int32_t>& after) {
            std::erase(after, gather);
            remap(after);
        };
        for (std::size_t k = g + 1; k < j; ++k) {
            Op op = in_[k];
            drop_gather(op.after);
            push(k, std::move(op));
        }
        const Op& ag = in_[g];
        const Op& gemm = in_[j];
        std::vector<std::int32_t> gemm_after = gemm.after;
        drop_gather(gemm_after);
        const std::int64_t steps = tp_ - 1;
        std::int32_t previous_step = -1;
        std::int32_t last_step = -1;
        std::int32_t last_chunk = -1;
        for (std::int64_t k = 0; k < tp_; ++k) {
            std::int32_t step = -1;
            if (k < steps) {
                Op s = ag;
                s.name = ag.name + ".step" + std::to_string(k);
                s.blocking = false;
                s.comm_sms = kRingExchangeSms;
                s.collective_bytes = Bytes{share(ag.collective_bytes.value, steps, k)};
                remap(s.after);
                step = append(std::move(s));
                last_step = step;
            }
            Op c = chunk_of(gemm, share(gemm.gemm.m, tp_, k), static_cast<int>(k));
            c.after = k == 0 ? gemm_after : std::vector<std::int32_t>{previous_step};
            last_chunk = append(std::move(c));
            previous_step = step;
        }
        index_[g] = last_step;
        index_[j] = last_chunk;
        return j;
    }

    // GEMM `i` and the reduce-scatter right after it: 4 chunks, each chunk's reduce-scatter beside the
    // next chunk; the last reduce-scatter blocks like the original.
    void pipeline(std::size_t i) {
        const Op& gemm = in_[i];
        const Op& rs = in_[i + 1];
        const std::int64_t n = std::min<std::int64_t>(kPipelineSplits, gemm.gemm.m);
        std::int32_t last_chunk = -1;
        std::int32_t last_scatter = -1;
        for (std::int64_t k = 0; k < n; ++k) {
            Op c = chunk_of(gemm, share(gemm.gemm.m, n, k), static_cast<int>(k));
            if (k == 0) {
                remap(c.after);
            } else {
                c.after.clear();
            }
            last_chunk = append(std::move(c));
            Op s = rs;
            s.name = rs.name + ".chunk" + std::to_string(k);
            s.collective_bytes = Bytes{share(rs.collective_bytes.value, n, k)};
            s.blocking = k + 1 == n;
            s.comm_sms = kPipelineSms;
            s.after = {last_chunk};
            last_scatter = append(std::move(s));
        }
        index_[i] = last_chunk;
        index_[i + 1] = last_scatter;
    }

    const OpList& in_;
    std::int64_t tp_;
    std::vector<std::int32_t> index_;
    OpList out_;
};

}  // namespace

OpList overlap_tp_comm(const OpList& ops, const LayerShape& shape) {
    if (shape.tp == 1) {
        return ops;
    }
    if (!shape.sequence_parallel) {
        throw std::invalid_argument("overlap_tp_comm: TE's userbuffers overlap needs sequence parallelism");
    }
    return Rewriter(ops, shape.tp).run();
}

}  // namespace trainsim::workload
