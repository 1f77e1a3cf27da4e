// Pieces the subcommands share: where shipped profiles live, scenario loading with overrides, the
// nccl-tests options, writing a text file whole or not at all.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "calibrate/import/nccl_tests_log.h"
#include "sim/config/scenario.h"

namespace trainsim::calibrate::cli {

/// The shipped profiles: $TRAINSIM_DATA_DIR/hardware, else the source tree's scenarios/hardware.
[[nodiscard]] std::string profile_directory();

/// A profile argument as a file path: a bare name (no '/', no ".json") is a shipped profile.
[[nodiscard]] std::string profile_path(const std::string& name_or_path);

[[nodiscard]] config::Scenario load_scenario(const std::string& path,
                                             const std::vector<std::string>& overrides);

/// --op/--ranks/--nodes for nccl-tests logs; throws InputError naming the option for a bad value.
[[nodiscard]] NcclLogOptions nccl_options(const std::string& op, int ranks, int nodes);

/// Writes `text` to `path` through a temporary file; InputError naming `option` when it cannot.
void write_text_file(const std::string& path, const std::string& option, const std::string& text);

}  // namespace trainsim::calibrate::cli
