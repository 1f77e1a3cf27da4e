// One entry point for every input format: a measurement file, a benchmark run's JSON, an nccl-tests log.
#pragma once

#include <string>
#include <vector>

#include "calibrate/import/nccl_tests_log.h"
#include "calibrate/measure/measurement.h"

namespace trainsim::calibrate {

enum class InputFormat { MeasurementFile, BenchmarkJson, NcclTestsLog };

struct InputSpec {
    std::string path;
    NcclLogOptions nccl;  // only for an nccl-tests log
};

/// A JSON document with "schema": "trainsim-measurements/1" is a measurement file, one with "benchmarks"
/// a benchmark run; anything else is read as an nccl-tests log. Throws InputError for JSON of neither kind.
[[nodiscard]] InputFormat detect_input_format(const std::string& text, const std::string& path);

/// Reads every input and merges them (MeasurementSet::append's rules).
[[nodiscard]] MeasurementSet load_measurements(const std::vector<InputSpec>& inputs);

}  // namespace trainsim::calibrate
