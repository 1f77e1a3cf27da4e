#include "sim/workload/tp_replicated_gradients.h"

#include "sim/workload/mtp_block.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/stage_layers.h"

namespace trainsim::workload {

std::int64_t tp_replicated_layer_parameters(const LayerShape& x, bool qk_layernorm) {
    const auto norm = [&x](std::int64_t width) { return x.rmsnorm ? width : 2 * width; };
    std::int64_t n = 0;
    if (qk_layernorm && !x.mla) {
        n += 2 * norm(x.head_dim());  // q_layernorm and k_layernorm, one weight of width d each
    }
    if (!x.sequence_parallel) {
        return n;
    }
    n += 2 * norm_parameters(x);  // the input norm and the pre-MLP norm
    if (x.bias) {
        n += x.hidden;  // the output projection's bias (row-parallel)
        if (!x.moe()) {
            n += x.hidden;  // fc2's bias (row-parallel); MoE layers refuse add_bias_linear
        }
    }
    if (x.mla) {
        const config::MlaConfig& m = *x.mla;
        const std::int64_t rq = m.q_lora_rank.value_or(0);
        if (rq > 0) {
            n += x.hidden * rq + norm(rq);  // linear_q_down_proj and the q latent norm
        }
        n += x.hidden * (m.kv_lora_rank + m.qk_pos_emb_head_dim) + norm(m.kv_lora_rank);
    }
    if (x.moe()) {
        n += x.hidden * x.experts;  // the router's weight
    }
    return n;
}

TpReplicatedParameters tp_replicated_parameters(const config::Scenario& sc, std::int64_t pipeline_rank) {
    TpReplicatedParameters out;
    if (sc.parallelism.tensor_model_parallel_size <= 1) {
        return out;
    }
    for (const std::int64_t layer : stage_layers(sc, pipeline_rank)) {
        out.layers += tp_replicated_layer_parameters(layer_shape_of(sc, layer), sc.model.qk_layernorm);
    }
    if (sc.parallelism.sequence_parallel && sc.holds_last_stage(pipeline_rank)) {
        out.final_norm = norm_parameters(layer_shape_of(sc));
    }
    if (sc.model.mtp_num_layers > 0 && sc.holds_last_stage(pipeline_rank)) {
        // Each MTP depth's layer, and with SP its enorm, hnorm and final norm (mtp_block.h).
        const LayerShape mtp = mtp_layer_shape(sc);
        const std::int64_t norms = sc.parallelism.sequence_parallel ? 3 * norm_parameters(mtp) : 0;
        out.layers +=
            sc.model.mtp_num_layers * (tp_replicated_layer_parameters(mtp, sc.model.qk_layernorm) + norms);
    }
    return out;
}

}  // namespace trainsim::workload
