// The measurement file's JSON Schema (schemas/measurements.schema.json), compiled in: the reader
// takes each object's keys from it, so that the schema users validate against and the keys the reader
// accepts are one list, and an unknown key's error lists the schema's keys.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "calibrate/measure/json_writer.h"

namespace trainsim::calibrate {

/// The path of the schema in the repository, for messages.
inline constexpr std::string_view kMeasurementSchemaPath = "schemas/measurements.schema.json";

[[nodiscard]] const OrderedJson& measurement_schema();

/// The required and the optional keys of one object: the root ("") or a $defs entry ("gemm", "kernel",
/// "collective", "device", "fact"), in the schema's order.
struct SchemaKeys {
    std::vector<std::string> required;
    std::vector<std::string> optional;
};
[[nodiscard]] const SchemaKeys& measurement_schema_keys(const std::string& definition);

}  // namespace trainsim::calibrate
