// Runs validation cases: simulates each case's scenario the way its metric needs (one layer, a
// formula, or a whole iteration) and compares the result with the published value.
#pragma once

#include <string>
#include <vector>

#include "sim/validate/validation_case.h"

namespace trainsim::validate {

struct CaseResult {
    ValidationCase spec;
    std::string profile;          // the hardware profile the scenario ran on
    double simulated = 0.0;       // in spec.unit
    double error = 0.0;           // simulated − published, in spec.unit
    double relative_error = 0.0;  // error / |published| (0 when the published value is 0)
    double allowed = 0.0;         // the tolerance in spec.unit
    bool pass = false;
    std::vector<std::string> warnings;  // the cost model's, e.g. a size outside the calibrated range
};

struct ValidationReport {
    std::string path;
    std::string description;
    std::vector<CaseResult> results;
    [[nodiscard]] std::size_t failures() const;
};

/// Evaluates every case (each distinct simulation once). `profile_dir` is where profile names are
/// looked up. Throws InputError prefixed with the file and the case id when a case's scenario or
/// overrides are bad; nothing is returned half-done.
[[nodiscard]] ValidationReport run_validation(const ValidationFile& file, const std::string& profile_dir);

/// Whether `simulated` passes against `spec` (its value, tolerance and comparison).
[[nodiscard]] bool passes(const ValidationCase& spec, double simulated);

}  // namespace trainsim::validate
