// Strict typed access to a hardware-profile JSON document (format: scenarios/hardware/README.md).
// Every value is an object {"value", "kind", "source"[, "note"]}; every error is one InputError line
// `profile NAME: PATH RULE`, e.g. `profile x: gpu.hbm_GBps.value must be greater than 0, got -1`.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/strict_json.h"
#include "sim/cost/curve.h"
#include "sim/cost/profile_provenance.h"

namespace trainsim::cost {

/// The strict-JSON document type (keys in document order, so the first error is the first written).
using ProfileJson = Json;

/// What a curve's y values must satisfy.
enum class YRule { Positive, Efficiency };

class ProfileReader {
public:
    /// `profile_name` prefixes every message. Reads and validates the root's "sources" table, which the
    /// "source" field of every value is checked against.
    ProfileReader(std::string profile_name, const ProfileJson& root);
    /// As above, and records every value's provenance, note and assumption into `record`.
    ProfileReader(std::string profile_name, const ProfileJson& root, ProfileProvenance& record);

    [[noreturn]] void fail(const std::string& path, const std::string& rule) const;

    /// Checks that `object` (at `path`) is a JSON object with every key of `required`, and no key outside
    /// `required`, `optional` and "note" (free text allowed everywhere). Unknown keys come with a
    /// "did you mean" suggestion.
    void expect_keys(const ProfileJson& object, const std::string& path,
                     const std::vector<std::string_view>& required,
                     const std::vector<std::string_view>& optional = {}) const;

    /// `parent[key]`, which must be an object; the caller then checks its keys.
    [[nodiscard]] const ProfileJson& section(const ProfileJson& parent, const std::string& parent_path,
                                             std::string_view key) const;

    /// A required string.
    [[nodiscard]] std::string text(const ProfileJson& parent, const std::string& parent_path,
                                   std::string_view key) const;

    /// A value object whose number must be > 0 (and finite).
    [[nodiscard]] double positive(const ProfileJson& parent, const std::string& parent_path,
                                  std::string_view key) const;
    /// A value object whose number must lie in (0, 1].
    [[nodiscard]] double efficiency(const ProfileJson& parent, const std::string& parent_path,
                                    std::string_view key) const;
    /// A value object whose number must be a JSON integer ≥ 1.
    [[nodiscard]] std::int64_t positive_integer(const ProfileJson& parent, const std::string& parent_path,
                                                std::string_view key) const;

    /// A curve object {"points": [{"x", "y"[, "kind", "source"]}...][, "kind", "source"]}: at least one
    /// point, x > 0 and strictly increasing, y by `rule`; kind and source on each point or on the curve.
    [[nodiscard]] Curve curve(const ProfileJson& parent, const std::string& parent_path, std::string_view key,
                              YRule rule) const;

    /// An optional list of modelling assumptions [{"what", "kind", "source"}...]: documentation the
    /// loader checks for form (and source ids) only.
    void assumptions(const ProfileJson& parent, const std::string& parent_path) const;

private:
    // The number in `parent[key]`, a value object, after checking its kind and source.
    [[nodiscard]] const ProfileJson& value_of(const ProfileJson& parent, const std::string& parent_path,
                                              std::string_view key) const;
    [[nodiscard]] double number(const ProfileJson& value, const std::string& path) const;
    // Checks a "kind" and a "source" string; returns the source.
    std::string provenance(const ProfileJson& kind, const ProfileJson& source, const std::string& path) const;
    void read_sources(const ProfileJson& root);
    // Keeps `object`'s kind and source (already checked) as the provenance of `path`.
    void record(const std::string& path, const ProfileJson& object) const;

    std::string name_;
    std::set<std::string> source_ids_;
    ProfileProvenance* record_ = nullptr;  // where provenance goes, when the caller keeps it
};

/// Parses a profile document strictly (parse_strict_json, source `profile LABEL`).
[[nodiscard]] ProfileJson parse_profile_json(const std::string& text, const std::string& label);

}  // namespace trainsim::cost
