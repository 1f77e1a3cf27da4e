// The rules between the mixture-of-experts, multi-latent attention and expert-parallel keys, and those of
// the combined 1F1B that overlaps the expert all-to-alls, as Megatron-LM's argument checks, Megatron-Core's
// TransformerConfig and its expert rank generator impose them.
#pragma once

#include "sim/config/scenario.h"

namespace trainsim::config {

/// Throws InputError (one line naming the key and the rule) when the MoE/MLA/MTP keys or the
/// expert-parallel sizes break a rule. validate_scenario calls it.
void validate_moe(const Scenario& scenario);

}  // namespace trainsim::config
