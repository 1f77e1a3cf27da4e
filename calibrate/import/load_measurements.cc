#include "calibrate/import/load_measurements.h"

#include "calibrate/import/benchmark_json.h"
#include "calibrate/import/blas_bench_table.h"
#include "calibrate/import/mamf_finder_log.h"
#include "calibrate/measure/measurement_file.h"
#include "calibrate/measure/source_id.h"
#include "calibrate/measure/strict_json.h"
#include "sim/core/input_error.h"

namespace trainsim::calibrate {

InputFormat detect_input_format(const std::string& text, const std::string& path) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || text[first] != '{') {
        if (looks_like_blas_bench_table(text)) {
            return InputFormat::BlasBenchTable;
        }
        return looks_like_mamf_finder_log(text) ? InputFormat::MamfFinderLog : InputFormat::NcclTestsLog;
    }
    const OrderedJson root = StrictJson(path).parse(text);
    if (root.contains("schema")) {
        return InputFormat::MeasurementFile;  // its reader checks the schema's value
    }
    if (root.contains("benchmarks")) {
        return InputFormat::BenchmarkJson;
    }
    throw InputError(path + ": a JSON file that is neither a measurement file (\"schema\": \"" +
                     std::string(kMeasurementSchema) + "\") nor Google Benchmark output (\"benchmarks\")");
}

MeasurementSet load_measurements(const std::vector<InputSpec>& inputs) {
    MeasurementSet all;
    for (const InputSpec& input : inputs) {
        if (looks_like_kineto_trace(input.path)) {
            if (input.nccl.op || input.nccl.ranks || input.nccl.nodes) {
                throw InputError(input.path + ": op, ranks and nodes are for nccl-tests logs; this file is a "
                                              "PyTorch profiler trace");
            }
            all.append(import_kineto_trace(input.path, input.kineto));
            continue;
        }
        const std::string text = read_text_file(input.path);
        const InputFormat format = detect_input_format(text, input.path);
        const bool log_options = input.nccl.op || input.nccl.ranks || input.nccl.nodes;
        if (format != InputFormat::NcclTestsLog && log_options) {
            throw InputError(input.path + ": op, ranks and nodes are for nccl-tests logs; this file is " +
                             (format == InputFormat::BlasBenchTable  ? "a GEMM benchmark table"
                              : format == InputFormat::MamfFinderLog ? "a mamf-finder log"
                                                                     : "JSON"));
        }
        switch (format) {
        case InputFormat::MeasurementFile:
            all.append(parse_measurement_file(text, input.path));
            break;
        case InputFormat::BenchmarkJson:
            all.append(parse_benchmark_json(text, input.path));
            break;
        case InputFormat::NcclTestsLog:
            all.append(parse_nccl_tests_log(text, input.path, input.nccl));
            break;
        case InputFormat::BlasBenchTable:
            all.append(parse_blas_bench_table(text, input.path));
            break;
        case InputFormat::MamfFinderLog:
            all.append(parse_mamf_finder_log(text, input.path));
            break;
        }
    }
    return all;
}

}  // namespace trainsim::calibrate
