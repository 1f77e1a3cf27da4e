// A published measurement to compare the simulator against: which scenario (with overrides), which
// metric, the published value with its unit, how close the simulator must come, and where the number
// was published. `trainsim validate FILE` reads a file of these (scenarios/validation/README.md).
#pragma once

#include <string>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/validate/metric.h"

namespace trainsim::validate {

/// How the simulated value is judged against the published one.
enum class Comparison {
    Equal,   // |simulated − published| within the tolerance
    AtMost,  // the publication gives an upper bound: simulated ≤ published + tolerance
    AtLeast  // a lower bound: simulated ≥ published − tolerance
};

struct Tolerance {
    bool relative = true;  // a fraction of the published value; otherwise absolute, in the case's unit
    double amount = 0.0;
    /// The allowed deviation in the case's unit for a published value.
    [[nodiscard]] double allowed(double published) const;
};

struct ValidationCase {
    std::string id;
    std::string scenario_path;  // resolved against the validation file's folder
    std::vector<config::Override> overrides;
    Metric metric = Metric::PerLayerForwardTime;
    double value = 0.0;  // as published, in `unit`
    Unit unit;
    Tolerance tolerance;
    Comparison comparison = Comparison::Equal;
    std::string source;
    std::string notes;
};

struct ValidationFile {
    std::string path;
    std::string description;
    std::vector<ValidationCase> cases;
};

/// Reads and checks a validation file. Throws InputError naming the file, the case and the key
/// (`FILE: cases[3] (ID).unit="GB" is not a unit of time: s, ms, us`) for malformed JSON, unknown or
/// missing keys, wrong types, a unit that does not fit the metric, a repeated id or a bad tolerance.
/// Scenarios are not loaded here; evaluation does that and reports their errors with the case id.
[[nodiscard]] ValidationFile read_validation_file(const std::string& path);

/// The same from text already in memory; relative scenario paths are resolved against `base_dir`.
[[nodiscard]] ValidationFile parse_validation_file(const std::string& text, const std::string& source,
                                                   const std::string& base_dir);

[[nodiscard]] const char* to_string(Comparison comparison);

}  // namespace trainsim::validate
