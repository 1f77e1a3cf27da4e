#include "sim/workload/selective_recompute.h"

namespace trainsim::workload {

using config::RecomputeGranularity;
using config::RecomputeModule;

SelectiveRecompute selective_recompute(const LayerShape& x, RecomputeGranularity granularity) {
    SelectiveRecompute r;
    if (granularity != RecomputeGranularity::Selective) {
        return r;
    }
    const config::RecomputeModules& m = x.recompute_modules;
    const bool layernorm = m.contains(RecomputeModule::LayerNorm);
    r.core_attn = m.contains(RecomputeModule::CoreAttn);
    r.input_norm = layernorm && x.mla.has_value();
    r.mla_up_proj = m.contains(RecomputeModule::MlaUpProj) && x.mla.has_value();
    r.pre_mlp_norm = layernorm && x.moe();
    r.mlp = m.contains(RecomputeModule::Mlp) && !x.moe();
    r.moe = m.contains(RecomputeModule::Moe) && x.moe();
    r.moe_act = m.contains(RecomputeModule::MoeAct) && x.moe();
    r.shared_experts = m.contains(RecomputeModule::SharedExperts) && x.moe() && x.shared_ffn > 0;
    return r;
}

}  // namespace trainsim::workload
