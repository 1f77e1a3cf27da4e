// Source ids, the keys of a hardware profile's sources table that every value's provenance cites:
// "S-" then upper-case words joined by '-', e.g. S-STAS-NET. One scanner for the profile reader and the
// calibration tools, hand-written and linear: libstdc++'s std::regex recurses once per character, and
// long citation texts come from input files.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace trainsim {

/// The source ids a citation text names ("S-AZURE: ... and S-ELEUTHER ..." → S-AZURE, S-ELEUTHER): ids
/// not glued to a preceding word character ("XS-NOPE" names none).
[[nodiscard]] std::vector<std::string> cited_source_ids(std::string_view text);

/// Whether `id` is a well-formed source id.
[[nodiscard]] bool is_source_id(std::string_view id);

}  // namespace trainsim
