// The set of keys a scenario may contain (DESIGN.md §4), and the "unknown key" errors with their
// "did you mean" suggestions. Both the file and `--set` paths are checked against this one table.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/core/strict_json.h"

namespace trainsim::config {

struct SectionSchema {
    std::string_view name;
    std::vector<std::string> keys;
};

/// The sections (objects) of a scenario and their keys, in documentation order.
[[nodiscard]] const std::vector<SectionSchema>& scenario_sections();

/// Keys allowed at the top level: the sections plus `name` and `schedule`.
[[nodiscard]] const std::vector<std::string>& top_level_keys();

/// The one top-level key beyond top_level_keys(): the JSON Schema the file follows
/// (schemas/scenario.schema.json), for editors. Its value must be a string and is otherwise ignored; it
/// sets nothing, so `--set`, sweeps and suggestions do not know it.
inline constexpr std::string_view kSchemaReferenceKey = "$schema";

/// The closest known dotted path to a misspelled `path` (e.g. "model.hiden_size" → "model.hidden_size",
/// "num_layers" → "model.num_layers"), or "" when nothing is close.
[[nodiscard]] std::string suggest_path(std::string_view path);

/// Throws InputError `PATH: unknown key (did you mean ...?)` for the first key of `root` or of one of
/// its sections that the schema does not know, and for a kSchemaReferenceKey that is not a string.
/// `root` must be an object; a section that is not an object is left for the reader to reject.
void check_known_keys(const Json& root);

/// True when `path` is a top-level key or `section.key` of the schema.
[[nodiscard]] bool is_known_path(std::string_view path);

/// The message for an unknown `path`, with a suggestion or the list of keys that would be allowed.
[[nodiscard]] std::string unknown_key_message(std::string_view path);

}  // namespace trainsim::config
