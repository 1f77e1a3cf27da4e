// The measurement file's JSON Schema is the reader's: its keys are the keys the reader accepts (taken from
// it), its enums the reader's names, and an unknown key's error lists the valid ones.
#include <gtest/gtest.h>

#include "calibrate/measure/measurement.h"
#include "calibrate/measure/measurement_file.h"
#include "calibrate/measure/measurement_schema.h"
#include "calibrate/measure/source_id.h"
#include "calibrate/tests/calibrate_test_support.h"
#include "sim/core/input_error.h"

namespace trainsim::calibrate {
namespace {

std::string error_of(const std::string& text) {
    try {
        (void)parse_measurement_file(text, "h100-meas.json");
    } catch (const InputError& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(MeasurementSchema, TheShippedFileIsTheCompiledOne) {
    const OrderedJson shipped =
        OrderedJson::parse(read_text_file(testing::source_path(std::string(kMeasurementSchemaPath))));
    EXPECT_EQ(shipped, measurement_schema());
    EXPECT_EQ(shipped.at("properties").at("schema").at("const"), kMeasurementSchema);
}

TEST(MeasurementSchema, AnUnknownKeyListsTheValidOnes) {
    // The key a new user guesses for the records: no close match, so every valid key is listed.
    EXPECT_EQ(
        error_of(
            R"({"schema": "trainsim-measurements/1", "description": "d", "sources": {}, "records": []})"),
        "h100-meas.json: records is not a known key (valid keys: schema, description, sources, device, gemm, "
        "kernels, collectives)");
    EXPECT_EQ(
        error_of(R"({"schema": "trainsim-measurements/1", "description": "d", "sources": {"S-X": "x"},
                          "gemm": [{"m": 1, "n": 1, "k": 1, "seconds": 1, "source": "S-X"}]})"),
        "h100-meas.json: gemm[0].seconds is not a known key (valid keys: m, n, k, source, id, batch, class, "
        "dtype, time_us, tflops, tags)");
}

// The simulator's strict reader (sim/core/strict_json): calibration inputs refuse a repeated key too,
// instead of keeping the last one silently.
TEST(MeasurementSchema, ARepeatedKeyIsRefused) {
    EXPECT_EQ(error_of(R"({"schema": "trainsim-measurements/1", "description": "d", "description": "e"})"),
              "h100-meas.json: description: duplicate key (each key may appear only once)");
}

TEST(MeasurementSchema, EnumsAreTheReadersNames) {
    const OrderedJson& defs = measurement_schema().at("$defs");
    EXPECT_EQ(defs.at("kernel").at("properties").at("kernel").at("enum").get<std::vector<std::string>>(),
              kernel_kind_names());
    for (const auto& name : defs.at("collective").at("properties").at("op").at("enum")) {
        EXPECT_TRUE(collective_kind_from(name.get<std::string>())) << name;
    }
    EXPECT_EQ(defs.at("collective").at("properties").at("op").at("enum").size(), 4U);
    for (const auto& name : defs.at("gemm").at("properties").at("class").at("enum")) {
        EXPECT_TRUE(gemm_class_from(name.get<std::string>())) << name;
    }
    EXPECT_EQ(measurement_schema_keys("collective").required,
              (std::vector<std::string>{"op", "ranks", "bytes", "source"}));
}

}  // namespace
}  // namespace trainsim::calibrate
