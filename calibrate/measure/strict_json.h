// Strict typed access to the calibration's JSON inputs (measurement files, fit specs, benchmark output):
// every problem is one InputError line "LABEL: PATH RULE", e.g.
// "calibrate/data/x.json: gemm[2].m must be a positive integer, got -4".
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "calibrate/measure/json_writer.h"
#include "sim/core/strict_json.h"

namespace trainsim::calibrate {

class StrictJson {
public:
    /// `label` (usually the file path) prefixes every message.
    explicit StrictJson(std::string label) : label_(std::move(label)) {}

    /// Parses `text` with the simulator's strict reader (parse_strict_json): a syntax error is
    /// "LABEL: invalid JSON at line L, column C: ...", a repeated key "LABEL: PATH: duplicate key ...".
    [[nodiscard]] OrderedJson parse(const std::string& text) const;

    [[noreturn]] void fail(const std::string& path, const std::string& rule) const;

    /// `object` must be an object with every key of `required` and none outside `required` and
    /// `optional`; an unknown key is reported with a "did you mean".
    void expect_keys(const OrderedJson& object, const std::string& path,
                     const std::vector<std::string_view>& required,
                     const std::vector<std::string_view>& optional = {}) const;

    [[nodiscard]] std::string text(const OrderedJson& parent, const std::string& path,
                                   std::string_view key) const;
    [[nodiscard]] double positive_number(const OrderedJson& parent, const std::string& path,
                                         std::string_view key) const;
    [[nodiscard]] double number(const OrderedJson& parent, const std::string& path,
                                std::string_view key) const;
    /// A JSON integer in [minimum, maximum].
    [[nodiscard]] std::int64_t integer(const OrderedJson& parent, const std::string& path,
                                       std::string_view key, std::int64_t minimum,
                                       std::int64_t maximum = std::numeric_limits<std::int64_t>::max()) const;
    [[nodiscard]] std::vector<std::string> text_list(const OrderedJson& parent, const std::string& path,
                                                     std::string_view key) const;
    [[nodiscard]] const OrderedJson& array(const OrderedJson& parent, const std::string& path,
                                           std::string_view key) const;
    [[nodiscard]] const OrderedJson& object(const OrderedJson& parent, const std::string& path,
                                            std::string_view key) const;

    [[nodiscard]] const std::string& label() const { return label_; }

private:
    std::string label_;
};

/// The largest group size or node count accepted: far above any cluster, far below int's range.
inline constexpr std::int64_t kMaxRanks = 1'000'000;

/// `parent.key`, or `key` at the root; `path[i]` for an element.
[[nodiscard]] std::string member_path(const std::string& parent, std::string_view key);
[[nodiscard]] std::string element_path(const std::string& parent, std::size_t index);

// describe_json (a value in at most ~48 characters, for messages): sim/core/strict_json.h.
using trainsim::describe_json;

}  // namespace trainsim::calibrate
