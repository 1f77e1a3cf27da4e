// The rules between the mixture-of-experts, multi-latent attention and expert-parallel keys, as
// Megatron-LM's argument checks and Megatron-Core's expert rank generator impose them.
#pragma once

#include "sim/config/scenario.h"

namespace trainsim::config {

/// Throws InputError (one line naming the key and the rule) when the MoE/MLA/MTP keys or the
/// expert-parallel sizes break a rule. validate_scenario calls it.
void validate_moe(const Scenario& scenario);

}  // namespace trainsim::config
