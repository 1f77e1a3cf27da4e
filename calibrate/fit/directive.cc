#include "calibrate/fit/directive.h"

#include <algorithm>

namespace trainsim::calibrate {

bool is_directive(const OrderedJson& node) {
    return node.is_object() && node.contains("fit");
}

Directive::Directive(std::string path, const OrderedJson& node, const StrictJson& json)
    : path_(std::move(path)), node_(node), json_(json) {
    if (!node_.at("fit").is_object()) {
        json_.fail(member_path(path_, "fit"),
                   "must be an object of fit options (may be empty), got " + describe_json(node_.at("fit")));
    }
    if (node_.contains("kind") != node_.contains("source")) {
        json_.fail(member_path(path_, node_.contains("kind") ? "source" : "kind"),
                   "is required beside " + std::string(node_.contains("kind") ? "kind" : "source"));
    }
}

void Directive::expect(const std::vector<std::string_view>& options,
                       const std::vector<std::string_view>& extra) const {
    std::vector<std::string_view> keys = {"kind", "source", "note"};
    keys.insert(keys.end(), extra.begin(), extra.end());
    json_.expect_keys(node_, path_, {"fit"}, keys);
    json_.expect_keys(this->options(), member_path(path_, "fit"), {}, options);
    if (node_.contains("kind")) {
        (void)json_.text(node_, path_, "kind");
        (void)json_.text(node_, path_, "source");
    }
}

std::string Directive::text(std::string_view option, const std::string& fallback,
                            const std::vector<std::string>& allowed) const {
    if (!has(option)) {
        return fallback;
    }
    const std::string v = json_.text(options(), member_path(path_, "fit"), option);
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
        std::string list;
        for (const auto& a : allowed) {
            list += (list.empty() ? "" : ", ") + a;
        }
        fail_option(option, "must be one of " + list + ", got '" + v + "'");
    }
    return v;
}

bool Directive::flag(std::string_view option, bool fallback) const {
    if (!has(option)) {
        return fallback;
    }
    const OrderedJson& v = options().at(option);
    if (!v.is_boolean()) {
        fail_option(option, "must be true or false, got " + describe_json(v));
    }
    return v.get<bool>();
}

std::vector<std::string> Directive::list(std::string_view option) const {
    return has(option) ? json_.text_list(options(), member_path(path_, "fit"), option)
                       : std::vector<std::string>{};
}

std::optional<int> Directive::integer(std::string_view option) const {
    if (!has(option)) {
        return std::nullopt;
    }
    return static_cast<int>(json_.integer(options(), member_path(path_, "fit"), option, 0));
}

Rounding Directive::rounding(Rounding fallback) const {
    if (has("decimals") && has("significant")) {
        fail_option("significant", "cannot be given with decimals");
    }
    if (const auto d = integer("decimals")) {
        return Rounding::decimals(*d);
    }
    if (const auto s = integer("significant")) {
        if (*s < 1) {
            fail_option("significant", "must be at least 1");
        }
        return Rounding::significant(*s);
    }
    return fallback;
}

std::string Directive::kind(const std::string& fallback) const {
    return node_.contains("kind") ? node_.at("kind").get<std::string>() : fallback;
}

std::string Directive::source(const std::string& fallback) const {
    return node_.contains("source") ? node_.at("source").get<std::string>() : fallback;
}

void Directive::fail(const std::string& rule) const {
    json_.fail(path_, rule);
}

void Directive::fail_option(std::string_view option, const std::string& rule) const {
    json_.fail(member_path(member_path(path_, "fit"), option), rule);
}

}  // namespace trainsim::calibrate
