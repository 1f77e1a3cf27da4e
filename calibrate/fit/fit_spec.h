// A fit spec, "trainsim-fit-spec/1": the inputs (files beside the spec, with what an nccl-tests log does
// not say itself) and the profile to produce, written as the profile with a directive wherever a number
// comes from the data. calibrate/data/a100-80gb-selene.fit.json regenerates the shipped A100 profile.
#pragma once

#include <string>
#include <vector>

#include "calibrate/import/load_measurements.h"
#include "calibrate/measure/json_writer.h"

namespace trainsim::calibrate {

inline constexpr const char* kFitSpecSchema = "trainsim-fit-spec/1";

struct FitSpec {
    std::string path;
    std::vector<InputSpec> inputs;  // paths resolved against the spec's folder
    OrderedJson profile;
};

/// Reads a spec. Throws InputError "PATH: KEY RULE" for anything malformed.
[[nodiscard]] FitSpec read_fit_spec(const std::string& path);

}  // namespace trainsim::calibrate
