// parse_scenario and load_scenario: text → document → overrides → key check → typed read → validation.
// Each step sees the document as the previous one left it, so an overridden value passes through the
// same checks as one written in the file.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/core/strict_json.h"
#include "sim/config/overrides.h"
#include "sim/config/scenario.h"
#include "sim/config/scenario_reader.h"
#include "sim/config/scenario_schema.h"
#include "sim/core/input_error.h"

namespace trainsim::config {

namespace {

// `source` names the text in JSON syntax errors (the file's path, or the default name).
Scenario parse_from(const std::string& json_text, const std::string& source, const std::string& default_name,
                    const std::vector<Override>& overrides) {
    Json document = parse_strict_json(json_text, source);
    if (!document.is_object()) {
        throw InputError(source + ": expected a JSON object at the top level, got " +
                         describe_json(document));
    }
    apply_overrides(document, overrides);
    check_known_keys(document);
    Scenario scenario = read_scenario(document, default_name);
    validate_scenario(scenario);
    return scenario;
}

}  // namespace

Scenario parse_scenario(const std::string& json_text, const std::string& default_name,
                        const std::vector<Override>& overrides) {
    return parse_from(json_text, default_name, default_name, overrides);
}

Scenario load_scenario(const std::string& path, const std::vector<Override>& overrides) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        throw InputError(path + ": is a directory, not a scenario file");
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw InputError(path + ": cannot open scenario file (" +
                         (std::filesystem::exists(path, ec) ? "permission denied?" : "no such file") + ")");
    }
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) {
        throw InputError(path + ": cannot read scenario file");
    }
    return parse_from(text.str(), path, std::filesystem::path(path).stem().string(), overrides);
}

}  // namespace trainsim::config
