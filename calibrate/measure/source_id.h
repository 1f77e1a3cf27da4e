// Every input file becomes an entry of the fitted profile's sources table, so that a fitted number can
// cite the file its data came from.
#pragma once

#include <string>
#include <vector>

namespace trainsim::calibrate {

/// "S-DATA-" and the file name without its extension, upper-cased, every other character a '-':
/// calibrate/data/a100-all_reduce_perf.log → S-DATA-A100-ALL-REDUCE-PERF (the profile's id pattern).
[[nodiscard]] std::string source_id_for_path(const std::string& path);

/// The path as a citation gives it: relative to the working directory when the file lies below it (so a
/// profile regenerated from the repository root cites repository paths), else as given.
[[nodiscard]] std::string display_path(const std::string& path);

/// The source ids a citation text names ("S-AZURE: ... and S-ELEUTHER ..." → S-AZURE, S-ELEUTHER), by the
/// pattern of the profile loader: "S-" and upper-case words joined by '-', not glued to a preceding word.
[[nodiscard]] std::vector<std::string> cited_source_ids(const std::string& text);

/// Whether `id` is a well-formed source id.
[[nodiscard]] bool is_source_id(const std::string& id);

/// The whole file as text. Throws InputError "PATH: cannot be read" when it cannot be opened.
[[nodiscard]] std::string read_text_file(const std::string& path);

}  // namespace trainsim::calibrate
