// The `trainsim-calibrate` subcommands. Each returns the process exit status; bad input throws InputError
// (exit 2 in main).
#pragma once

#include <string>
#include <vector>

namespace trainsim::calibrate::cli {

/// `run --output FILE [--backend cpu|cuda] [--scenario FILE [--set k=v]...] [--tiny] ...`
int run_command(const std::vector<std::string>& args);

/// `import INPUT... --output FILE [--op OP] [--ranks N] [--nodes N]`
int import_command(const std::vector<std::string>& args);

/// `fit (--spec SPEC | --base PROFILE) [INPUT...] --output PROFILE.json [--report FILE] [--peak-tflops X]`
int fit_command(const std::vector<std::string>& args);

/// `compare PROFILE_A [PROFILE_B] SCENARIO [--set k=v]... [--format text|json]`
int compare_command(const std::vector<std::string>& args);

}  // namespace trainsim::calibrate::cli
