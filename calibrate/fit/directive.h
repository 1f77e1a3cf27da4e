// A fit directive: at a profile path, an object whose "fit" member asks for the value or curve to be
// fitted, with options, next to the provenance the result should carry:
//   "p2p_GBps": {"fit": {}, "kind": "measured", "source": "S-SENDRECV: ..."}
// A fit spec writes them by hand; `fit --base` generates them for whatever was measured.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "calibrate/fit/rounding.h"
#include "calibrate/measure/strict_json.h"

namespace trainsim::calibrate {

class Directive {
public:
    /// `node` is the object at `path`; `json` labels messages with the spec file.
    Directive(std::string path, const OrderedJson& node, const StrictJson& json);

    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] const OrderedJson& node() const { return node_; }
    [[nodiscard]] const OrderedJson& options() const { return node_.at("fit"); }

    /// Checks the node's keys (fit, kind, source, note and `extra`) and the options' keys.
    void expect(const std::vector<std::string_view>& options,
                const std::vector<std::string_view>& extra = {}) const;

    [[nodiscard]] bool has(std::string_view option) const { return options().contains(option); }
    [[nodiscard]] std::string text(std::string_view option, const std::string& fallback,
                                   const std::vector<std::string>& allowed) const;
    [[nodiscard]] bool flag(std::string_view option, bool fallback) const;
    [[nodiscard]] std::vector<std::string> list(std::string_view option) const;
    [[nodiscard]] std::optional<int> integer(std::string_view option) const;
    /// From "decimals" or "significant" (not both), else `fallback`.
    [[nodiscard]] Rounding rounding(Rounding fallback) const;

    /// The provenance the result carries: the node's kind and source when it gives them, else the fallback.
    [[nodiscard]] std::string kind(const std::string& fallback) const;
    [[nodiscard]] std::string source(const std::string& fallback) const;
    [[nodiscard]] bool gives_provenance() const { return node_.contains("kind"); }

    [[noreturn]] void fail(const std::string& rule) const;
    [[noreturn]] void fail_option(std::string_view option, const std::string& rule) const;

    [[nodiscard]] const StrictJson& json() const { return json_; }

private:
    std::string path_;
    const OrderedJson& node_;
    const StrictJson& json_;
};

/// Whether `node` is a directive (an object with a "fit" member).
[[nodiscard]] bool is_directive(const OrderedJson& node);

}  // namespace trainsim::calibrate
