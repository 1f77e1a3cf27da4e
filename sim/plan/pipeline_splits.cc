#include "sim/plan/pipeline_splits.h"

namespace trainsim::plan {
namespace {

// The first/last split of `layers` on p > 2 ranks with v chunks each (v divides the layers, as the
// ends and the middle ranks are all multiples of v), or none (first = 0): the fewest middle layers that
// leave neither end heavier than a middle rank. `swap` puts the heavier end last.
PipelineSplit first_last_split(std::int64_t layers, std::int64_t p, std::int64_t v, bool swap) {
    for (std::int64_t mid = v; layers - (p - 2) * mid >= 2 * v; mid += v) {
        const std::int64_t rest = layers - (p - 2) * mid;
        const std::int64_t light = rest / v / 2 * v;
        const std::int64_t heavy = rest - light;
        if (heavy <= mid) {
            return {p, v, SplitKind::FirstLast, swap ? light : heavy, swap ? heavy : light};
        }
    }
    return {};
}

}  // namespace

std::vector<std::int64_t> divisors(std::int64_t n, std::int64_t at_most) {
    std::vector<std::int64_t> out;
    for (std::int64_t k = 1; k <= n && k <= at_most; ++k) {
        if (n % k == 0) {
            out.push_back(k);
        }
    }
    return out;
}

void PipelineSplit::apply_to(config::ParallelConfig& par) const {
    par.pipeline_model_parallel_size = stages;
    par.virtual_pipeline_model_parallel_size = chunks;
    par.layers_per_pipeline_stage.clear();
    par.layers_per_virtual_stage.clear();
    par.pipeline_model_parallel_layout.reset();
    par.decoder_first_pipeline_num_layers.reset();
    par.decoder_last_pipeline_num_layers.reset();
    par.account_for_embedding_in_pipeline_split = kind == SplitKind::Accounted;
    par.account_for_loss_in_pipeline_split = kind == SplitKind::Accounted;
    if (kind == SplitKind::FirstLast) {
        par.decoder_first_pipeline_num_layers = first;
        par.decoder_last_pipeline_num_layers = last;
    }
}

std::vector<PipelineSplit> pipeline_splits(std::int64_t layers, std::int64_t max_stages) {
    std::vector<PipelineSplit> out;
    for (std::int64_t p = 1; p <= layers + 2 && p <= max_stages; ++p) {
        if (layers % p == 0) {
            for (const std::int64_t v : divisors(layers / p, layers)) {
                out.push_back({p, v});
            }
        }
        if (p <= 2) {
            continue;  // on 2 stages the accounted split is the even one
        }
        const std::int64_t slots = layers + 2;
        if (slots % p == 0 && slots / p >= 2) {
            for (const std::int64_t v : divisors(slots / p, slots)) {
                out.push_back({p, v, SplitKind::Accounted});
            }
        }
        for (const std::int64_t v : divisors(layers, layers / p)) {
            for (const bool swap : {false, true}) {
                const PipelineSplit s = first_last_split(layers, p, v, swap);
                const std::int64_t mid = s.first == 0 ? 0 : (layers - s.first - s.last) / (p - 2);
                const bool even = s.first == mid && s.last == mid;
                const bool accounted = v == 1 && s.first == mid - 1 && s.last == mid - 1;
                if (s.first == 0 || even || accounted || (swap && s.first == s.last)) {
                    continue;
                }
                out.push_back(s);
            }
        }
    }
    return out;
}

std::string split_label(const config::ParallelConfig& par) {
    if (par.account_for_embedding_in_pipeline_split) {
        return "uneven";  // Megatron's embedding- and loss-accounted split
    }
    if (par.decoder_first_pipeline_num_layers || par.decoder_last_pipeline_num_layers) {
        return "first" + std::to_string(par.decoder_first_pipeline_num_layers.value_or(0)) + " last" +
               std::to_string(par.decoder_last_pipeline_num_layers.value_or(0));
    }
    return "";
}

}  // namespace trainsim::plan
