// Typed access to the keys of one scenario section, with the type errors of DESIGN.md §5: each names
// the dotted key and what it expected, e.g. `training.micro_batch_size: expected a positive integer,
// got "4"`. Integers must be JSON integers: 4.5 and 4.0 are both rejected, so a value is never rounded.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/scenario_enums.h"
#include "sim/core/strict_json.h"

namespace trainsim::config {

class SectionReader {
public:
    /// Reads `root[section]` (an absent section reads as empty); an empty `section` reads `root` itself,
    /// and a dotted one ("hardware.topology") an object inside an object.
    /// Throws InputError when the section is present but not an object.
    SectionReader(const Json& root, std::string_view section);

    [[nodiscard]] bool has(std::string_view key) const { return find(key) != nullptr; }

    /// The raw value, or nullptr when absent: for keys of more than one JSON type (moe_layer_freq).
    [[nodiscard]] const Json* value(std::string_view key) const { return find(key); }

    /// Absent → nullopt. Otherwise a positive integer ≤ kMaxScenarioSize; null is an error.
    [[nodiscard]] std::optional<std::int64_t> positive_integer(std::string_view key) const;

    /// Absent or null → nullopt. Otherwise a positive integer ≤ kMaxScenarioSize.
    [[nodiscard]] std::optional<std::int64_t> nullable_positive_integer(std::string_view key) const;

    /// A positive integer that must be present; `hint` is appended to the "missing" message.
    [[nodiscard]] std::int64_t required_positive_integer(std::string_view key,
                                                         std::string_view hint = {}) const;

    /// Absent or null → empty. Otherwise a non-empty JSON array of positive integers ≤ kMaxScenarioSize;
    /// an element's errors name it as `PATH[i]`.
    [[nodiscard]] std::vector<std::int64_t> positive_integer_list(std::string_view key) const;

    /// Absent → nullopt; otherwise a finite JSON number >= `minimum`.
    [[nodiscard]] std::optional<double> number_at_least(std::string_view key, double minimum) const;

    /// Absent → `fallback`; otherwise a JSON boolean.
    [[nodiscard]] bool boolean(std::string_view key, bool fallback) const;

    /// Absent or null → nullopt; otherwise a JSON boolean.
    [[nodiscard]] std::optional<bool> nullable_boolean(std::string_view key) const;

    /// Absent → nullopt; otherwise a JSON string.
    [[nodiscard]] std::optional<std::string> string(std::string_view key) const;

    /// Absent (or null when `nullable`) → nullopt; otherwise one of the spellings in `table`.
    template <class E, std::size_t N>
    [[nodiscard]] std::optional<E> enumeration(std::string_view key, const std::array<EnumName<E>, N>& table,
                                               bool nullable) const {
        const Json* value = find(key);
        if (value == nullptr || (nullable && value->is_null())) {
            return std::nullopt;
        }
        if (value->is_string()) {
            if (const auto e = enum_from_name(table, value->get_ref<const std::string&>())) {
                return e;
            }
        }
        throw_enum_error(key, enum_names(table), *value, nullable);
    }

    /// Absent or null → nullopt. Otherwise a JSON array (empty allowed) of spellings in `table`; an
    /// element's error names it as `PATH[i]`, with a "did you mean" for a near miss.
    template <class E, std::size_t N>
    [[nodiscard]] std::optional<std::vector<E>>
    enumeration_list(std::string_view key, const std::array<EnumName<E>, N>& table) const {
        const Json* value = find(key);
        if (value == nullptr || value->is_null()) {
            return std::nullopt;
        }
        if (!value->is_array()) {
            throw_list_error(key, *value);
        }
        std::vector<E> out;
        for (std::size_t i = 0; i < value->size(); ++i) {
            const Json& element = (*value)[i];
            const auto e = element.is_string() ? enum_from_name(table, element.get_ref<const std::string&>())
                                               : std::nullopt;
            if (!e) {
                throw_enum_error(std::string(key) + "[" + std::to_string(i) + "]", enum_names(table), element,
                                 /*nullable=*/false);
            }
            out.push_back(*e);
        }
        return out;
    }

    /// The dotted path of `key` in this section.
    [[nodiscard]] std::string path(std::string_view key) const { return join_path(section_, key); }

private:
    [[nodiscard]] const Json* find(std::string_view key) const;
    [[noreturn]] void throw_enum_error(std::string_view key, const std::vector<std::string>& names,
                                       const Json& got, bool nullable) const;
    [[noreturn]] void throw_list_error(std::string_view key, const Json& got) const;

    const Json* object_ = nullptr;  // nullptr when the section is absent
    std::string section_;
};

/// The range rule for every size: `PATH: expected a positive integer ...`. Shared by the reader and by
/// validate_scenario so that a value from a file and one set in code fail with the same words.
void check_size(std::string_view path, std::int64_t value);

}  // namespace trainsim::config
