// Resuming a sweep into an existing CSV: which points are done, and where the last whole row ends.
// A killed sweep leaves whole rows plus at most one half-written line at the end; that line is not a
// row, and is cut off before new rows are appended.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace trainsim::sweep {

struct ExistingOutput {
    bool has_header = false;                  // false: a new or empty file (a header is written)
    std::set<std::vector<std::string>> done;  // the axis cells of every whole row
    std::size_t whole_bytes = 0;              // length of the header and whole rows
    std::size_t file_bytes = 0;               // length of the file (more: a half-written row)
};

/// Reads `path` if it exists. Throws InputError naming `option` when it cannot be read or its header is
/// not `header` (another sweep's output: the rows could not be matched to points).
[[nodiscard]] ExistingOutput scan_existing_output(const std::string& path, const std::string& option,
                                                  const std::string& header, std::size_t axes);

}  // namespace trainsim::sweep
