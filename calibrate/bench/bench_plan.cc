#include "calibrate/bench/bench_plan.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "sim/workload/parameter_count.h"
#include "sim/workload/stage_ops.h"
#include "sim/workload/transformer_layer.h"

namespace trainsim::calibrate {

namespace {

// Collective buffers hold whole elements of up to 4 bytes on every rank.
constexpr std::int64_t kCollectiveAlignment = 4;

auto gemm_key(const GemmCase& g) {
    return std::make_tuple(g.shape.m, g.shape.n, g.shape.k, g.shape.batch, static_cast<int>(g.cls), g.fp8,
                           g.split_accumulator);
}

std::string shape_text(const cost::GemmShape& s) {
    return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " batch " +
           std::to_string(s.batch);
}

void add_gemm(std::vector<GemmCase>& out, GemmCase g, const PlanOptions& options,
              std::vector<std::string>& notes, bool scalable) {
    if (options.max_gemm_flops > 0.0 && g.shape.flops().value > options.max_gemm_flops) {
        if (!scalable || !options.scale_to_fit) {
            notes.push_back("left out gemm " + shape_text(g.shape) + ": more FLOPs than --max-gemm-flops");
            return;
        }
        const cost::GemmShape scaled = scaled_to(g.shape, options.max_gemm_flops);
        notes.push_back("scaled gemm " + shape_text(g.shape) + " to " + shape_text(scaled) +
                        " (--max-gemm-flops)");
        g.shape = scaled;
    }
    if (std::any_of(out.begin(), out.end(), [&](const GemmCase& o) { return gemm_key(o) == gemm_key(g); })) {
        return;
    }
    out.push_back(g);
}

// A scenario kernel over more elements than the plan allows, scaled down to whole rows.
KernelCase fit_kernel(KernelCase k, const PlanOptions& options, std::vector<std::string>& notes) {
    if (!options.scale_to_fit || k.elements <= options.kernel_max_elements) {
        return k;
    }
    const std::int64_t row = std::min(k.row, options.kernel_max_elements);
    const std::int64_t elements = options.kernel_max_elements / row * row;
    notes.push_back("scaled kernel " + std::string(to_string(k.kind)) + " of " + std::to_string(k.elements) +
                    " elements to " + std::to_string(elements));
    return {k.kind, elements, row};
}

void add_kernel(std::vector<KernelCase>& out, const KernelCase& k) {
    if (k.elements <= 0 && k.kind != KernelKind::Empty) {
        return;
    }
    const bool seen = std::any_of(out.begin(), out.end(), [&](const KernelCase& o) {
        return o.kind == k.kind && o.elements == k.elements && o.row == k.row;
    });
    if (!seen) {
        out.push_back(k);
    }
}

void add_collective(std::vector<CollectiveCase>& out, CollectiveCase c) {
    const std::int64_t unit = kCollectiveAlignment * c.ranks;
    c.bytes = c.bytes / unit * unit;
    if (c.bytes <= 0) {
        return;
    }
    const bool seen = std::any_of(out.begin(), out.end(), [&](const CollectiveCase& o) {
        return o.op == c.op && o.ranks == c.ranks && o.bytes == c.bytes;
    });
    if (!seen) {
        out.push_back(c);
    }
}

bool row_wise(KernelKind kind) {
    return kind == KernelKind::LayerNorm || kind == KernelKind::ScaleMaskSoftmax ||
           kind == KernelKind::BiasGelu || kind == KernelKind::BiasDropoutAdd;
}

}  // namespace

std::vector<GemmCase> scenario_gemms(const config::Scenario& scenario) {
    const workload::LayerShape shape = workload::layer_shape_of(scenario);
    const auto recompute = scenario.training.recompute_granularity;
    const workload::OpList lists[] = {
        workload::layer_forward(shape, recompute),
        workload::layer_backward(shape, recompute),
        workload::output_forward(shape),
        workload::output_backward(shape),
    };
    std::vector<GemmCase> out;
    for (const auto& list : lists) {
        for (const workload::Op& op : list) {
            // Fused flash attention is one kernel, not a GEMM cuBLASLt can time: its curves come from
            // attention benchmarks (the profile's compute.attention.flash_*), and a batched GEMM of its
            // shape named flash_* would be a different kernel under its name.
            if (op.kind != workload::OpKind::Gemm || op.gemm_class == cost::GemmClass::FlashForward ||
                op.gemm_class == cost::GemmClass::FlashBackward) {
                continue;
            }
            const GemmCase g{op.gemm, op.gemm_class};
            if (std::none_of(out.begin(), out.end(),
                             [&](const GemmCase& o) { return gemm_key(o) == gemm_key(g); })) {
                out.push_back(g);
            }
        }
    }
    return out;
}

cost::GemmShape scaled_to(const cost::GemmShape& shape, double max_flops) {
    cost::GemmShape s = shape;
    if (s.flops().value <= max_flops) {
        return s;
    }
    // One factor on m, n, k keeps the aspect (a tall-skinny GEMM stays tall-skinny); the batch goes only
    // when single dimensions are already down to 1.
    const double per_matrix = max_flops / static_cast<double>(shape.batch);
    const double c = std::cbrt(per_matrix / (2.0 * static_cast<double>(shape.m) *
                                             static_cast<double>(shape.n) * static_cast<double>(shape.k)));
    const auto scale = [c](std::int64_t d) {
        return std::max<std::int64_t>(1, static_cast<std::int64_t>(d * c));
    };
    s.m = scale(shape.m);
    s.n = scale(shape.n);
    s.k = scale(shape.k);
    while (s.flops().value > max_flops && s.batch > 1) {
        s.batch = (s.batch + 1) / 2;
    }
    return s;
}

BenchPlan make_plan(const PlanOptions& options, std::vector<std::string>& left_out) {
    BenchPlan plan;
    plan.timing = options.timing;
    plan.collective_timing = options.collective_timing;

    for (std::int64_t d = options.gemm_min_dim; d <= options.gemm_max_dim; d *= 2) {
        add_gemm(plan.gemms, {{d, d, d, 1}, cost::GemmClass::Dense}, options, left_out, false);
    }
    add_kernel(plan.kernels, {KernelKind::Empty, 0, 1});
    for (std::int64_t e = options.kernel_min_elements; e <= options.kernel_max_elements; e *= 4) {
        for (const KernelKind kind :
             {KernelKind::Copy, KernelKind::LayerNorm, KernelKind::BiasGelu, KernelKind::BiasDropoutAdd,
              KernelKind::ScaleMaskSoftmax, KernelKind::Dropout, KernelKind::Optimizer}) {
            const std::int64_t row = row_wise(kind) ? std::min(options.kernel_row, e) : 1;
            add_kernel(plan.kernels, {kind, e / row * row, row});
        }
    }
    const int max_ranks = options.group_sizes.empty()
                              ? 0
                              : *std::max_element(options.group_sizes.begin(), options.group_sizes.end());
    for (const int ranks : options.group_sizes) {
        for (std::int64_t s = options.collective_min_bytes; s <= options.collective_max_bytes; s *= 4) {
            for (const auto op : {cost::CollectiveKind::AllReduce, cost::CollectiveKind::AllGather,
                                  cost::CollectiveKind::ReduceScatter}) {
                add_collective(plan.collectives, {op, ranks, s});
            }
            // Send/recv is a pair (pipeline neighbours), inside one node.
            if (ranks == 2 && options.nodes == 1) {
                add_collective(plan.collectives, {cost::CollectiveKind::SendRecv, 2, s});
            }
        }
    }

    for (const config::Scenario& sc : options.scenarios) {
        for (const GemmCase& g : scenario_gemms(sc)) {
            add_gemm(plan.gemms, g, options, left_out, true);
        }
        const workload::LayerShape x = workload::layer_shape_of(sc);
        const std::int64_t e = x.sequence_sharded_elements();
        const std::int64_t ffn_local = x.ffn / x.tp;
        const std::int64_t scores = x.micro_batch * x.local_heads() * x.seq * x.seq;
        std::vector<KernelCase> kernels = {
            {KernelKind::Copy, e, 1},
            {KernelKind::LayerNorm, e, x.hidden},
            {KernelKind::BiasDropoutAdd, e, x.hidden},
            {KernelKind::BiasGelu, x.tokens() * ffn_local, ffn_local},
            {KernelKind::Optimizer, workload::layer_parameters_per_rank(x), 1},
        };
        // The s x s score kernels run only in unfused attention; fused and flash attention never write the
        // scores (and at 8k tokens they would be gigabytes to time).
        if (sc.training.attention_backend == config::AttentionBackend::Unfused) {
            kernels.push_back({KernelKind::ScaleMaskSoftmax, scores, x.seq});
            kernels.push_back({KernelKind::Dropout, scores, 1});
        }
        for (const KernelCase& k : kernels) {
            add_kernel(plan.kernels, fit_kernel(k, options, left_out));
        }
        if (x.tp >= 2 && options.nodes == 1) {
            // Megatron's TP collectives move the full [s, b, h] activation in 16 bits.
            std::int64_t bytes = x.tokens() * x.hidden * 2;
            int ranks = static_cast<int>(x.tp);
            if (ranks > max_ranks || (options.scale_to_fit && bytes > options.collective_max_bytes)) {
                if (!options.scale_to_fit || max_ranks < 2) {
                    left_out.push_back(
                        "left out the scenario's tensor-parallel collectives: " + std::to_string(x.tp) +
                        " ranks, more than this run has (" + std::to_string(max_ranks) + ")");
                    bytes = 0;
                } else {
                    const int to_ranks = std::min(ranks, max_ranks);
                    const std::int64_t to_bytes = std::min(bytes, options.collective_max_bytes);
                    left_out.push_back("scaled the scenario's tensor-parallel collectives from " +
                                       std::to_string(bytes) + " bytes over " + std::to_string(ranks) +
                                       " ranks to " + std::to_string(to_bytes) + " bytes over " +
                                       std::to_string(to_ranks));
                    ranks = to_ranks;
                    bytes = to_bytes;
                }
            }
            if (bytes > 0) {
                for (const auto op : {cost::CollectiveKind::AllReduce, cost::CollectiveKind::AllGather,
                                      cost::CollectiveKind::ReduceScatter}) {
                    add_collective(plan.collectives, {op, ranks, bytes});
                }
            }
        }
    }
    return plan;
}

}  // namespace trainsim::calibrate
