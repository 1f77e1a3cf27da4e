// Every input file becomes an entry of the fitted profile's sources table, so that a fitted number can
// cite the file its data came from.
#pragma once

#include <string>
#include <vector>

#include "sim/core/source_id.h"

namespace trainsim::calibrate {

/// "S-DATA-" and the file name without its extension, upper-cased, every other character a '-':
/// calibrate/data/a100-all_reduce_perf.log → S-DATA-A100-ALL-REDUCE-PERF (the profile's id pattern).
[[nodiscard]] std::string source_id_for_path(const std::string& path);

/// The path as a citation gives it: relative to the working directory when the file lies below it (so a
/// profile regenerated from the repository root cites repository paths), else as given.
[[nodiscard]] std::string display_path(const std::string& path);

// cited_source_ids and is_source_id: sim/core/source_id.h, shared with the profile reader.
using trainsim::cited_source_ids;
using trainsim::is_source_id;

/// The whole file as text. Throws InputError "PATH: cannot be read" when it cannot be opened.
[[nodiscard]] std::string read_text_file(const std::string& path);

}  // namespace trainsim::calibrate
