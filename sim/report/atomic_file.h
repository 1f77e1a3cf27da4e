// Output files appear whole or not at all: written to a temporary beside the target, then renamed.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace trainsim::report {

/// Calls `write` with a stream to a temporary file in the target's directory and renames it onto
/// `path` when the write succeeded. Throws InputError naming `key` when the path cannot be written.
void write_file_atomically(const std::string& path, const std::string& key,
                           const std::function<void(std::ostream&)>& write);

}  // namespace trainsim::report
