// The sizes that determine one transformer layer's work on one tensor-parallel rank.
#pragma once

#include <cstdint>
#include <optional>

#include "sim/config/scenario.h"

namespace trainsim::workload {

struct LayerShape {
    std::int64_t seq = 0;          // s
    std::int64_t micro_batch = 0;  // b
    std::int64_t hidden = 0;       // h
    std::int64_t heads = 0;        // a
    std::int64_t ffn = 0;          // MLP hidden size (4h in the papers)
    std::int64_t vocab = 0;        // v (padded)
    std::int64_t tp = 1;           // t
    bool sequence_parallel = false;
    std::optional<config::Fp8Recipe> fp8;  // FP8 training (sim/workload/fp8_layer.h); unset: BF16

    [[nodiscard]] std::int64_t tokens() const { return seq * micro_batch; }  // s·b
    [[nodiscard]] std::int64_t head_dim() const { return hidden / heads; }
    [[nodiscard]] std::int64_t local_heads() const { return heads / tp; }
    /// Elements of one [s, b, h] activation as held by one rank: s·b·h, or s·b·h/t with sequence
    /// parallelism (LayerNorm, dropout and residual run on a 1/t shard of the sequence).
    [[nodiscard]] std::int64_t sequence_sharded_elements() const {
        return sequence_parallel ? tokens() * hidden / tp : tokens() * hidden;
    }
};

}  // namespace trainsim::workload
