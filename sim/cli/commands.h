// The `trainsim` subcommands. Each returns the process exit status.
#pragma once

#include <string>
#include <vector>

namespace trainsim::cli {

/// `trainsim run SCENARIO [--set k=v]... [--format text|json|csv] [--trace FILE] [--fold tp,dp|none]`
int run_command(const std::vector<std::string>& args);

/// `trainsim layer SCENARIO [--set k=v]... [--format text|json|csv]`
int layer_command(const std::vector<std::string>& args);

/// `trainsim activations [SCENARIO...] [--format text|json]`: Korthikanti Table 2 / Figure 7.
int activations_command(const std::vector<std::string>& args);

/// `trainsim whatif SCENARIO [--set k=v]... [--plot FILE.svg] [--jobs N]`: the iteration time's sensitivity
/// to each profile parameter and layout knob, ranked.
int whatif_command(const std::vector<std::string>& args);

/// `trainsim sweep SWEEP.json [-o FILE] [--jobs N]`: a grid of overrides → one CSV row per scenario.
int sweep_command(const std::vector<std::string>& args);

/// `trainsim plan --model PRESET|--scenario FILE --gpus N --global-batch B`: rank the layouts that fit.
int plan_command(const std::vector<std::string>& args);

/// `trainsim recompute [SCENARIO...]`: none, selective, full and overlapped recomputation compared.
int recompute_command(const std::vector<std::string>& args);

/// `trainsim validate FILE [--format text|json|csv]`: simulated vs published measurements; exit 1 when
/// one is outside its tolerance.
int validate_command(const std::vector<std::string>& args);

/// `trainsim check SCENARIO --measured TRACE...`: a measured iteration against the simulated one, per op,
/// per phase and in total.
int check_command(const std::vector<std::string>& args);

}  // namespace trainsim::cli
