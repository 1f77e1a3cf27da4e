// Loading and validating hardware profiles: the shipped A100 profile, and one broken copy per rule.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "sim/core/input_error.h"
#include "sim/cost/hardware_profile.h"

namespace trainsim::cost {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

const std::string kProfileDir = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/hardware";
const std::string kShipped = "a100-80gb-selene";

Json shipped_json() {
    std::ifstream in(kProfileDir + "/" + kShipped + ".json");
    return Json::parse(in);
}

// A private directory per test, removed afterwards.
class ProfileDir : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::temp_directory_path() /
               (std::string("trainsim_profile_") + info->name() + "_" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    // Writes the shipped profile, changed by `edit`, as NAME.json, and returns the loader's error message.
    std::string error_after(const std::function<void(Json&)>& edit, const std::string& name = kShipped) {
        Json j = shipped_json();
        edit(j);
        return error_of_text(j.dump(2), name);
    }

    std::string error_of_text(const std::string& text, const std::string& name = kShipped) {
        std::ofstream(dir_ / (name + ".json")) << text;
        try {
            (void)load_hardware_profile(name, dir_.string());
        } catch (const InputError& e) {
            const std::string message = e.what();
            EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
            return message;
        }
        ADD_FAILURE() << "loading succeeded";
        return "";
    }

    fs::path dir_;
};

TEST(HardwareProfile, ShippedProfileLoadsWithItsDatasheetValues) {
    const HardwareProfile p = load_hardware_profile(kShipped, kProfileDir);
    EXPECT_EQ(p.name, kShipped);
    EXPECT_EQ(p.peak_tflops, 312.0);
    EXPECT_EQ(p.hbm_GBps, 2039.0);
    EXPECT_EQ(p.memory_visible.value, 85198045184);
    EXPECT_GT(p.memory_reserved.value, 0);
    EXPECT_EQ(p.gpus_per_node, 8);
    EXPECT_EQ(p.num_sms, 108);
    EXPECT_EQ(p.tile_m, 256);
    EXPECT_EQ(p.tile_n, 128);
    EXPECT_EQ(p.gemm_efficiency_vs_flops.x.size(), 9U);
    EXPECT_EQ(p.memory_bound_kind_factor.size(), 10U);
    EXPECT_EQ(p.intra_node.busbw_GBps_vs_bytes.x.size(), 20U);
    EXPECT_EQ(p.intra_node.busbw_GBps_vs_bytes.y.back(), 234.89);
    EXPECT_EQ(p.intra_node.measured_group_size, 8);
    EXPECT_EQ(p.inter_node.nic_GBps, 23.5);
    EXPECT_EQ(p.inter_node.nics_per_node, 8);
    EXPECT_NE(p.intra_node.busbw_GBps_vs_bytes.source.find("S-STAS-NET"), std::string::npos);
}

TEST(HardwareProfile, PathAndBareNameLoadTheSameProfile) {
    const HardwareProfile by_name = load_hardware_profile(kShipped, kProfileDir);
    const HardwareProfile by_path =
        load_hardware_profile(kProfileDir + "/" + kShipped + ".json", "/nonexistent");
    EXPECT_EQ(by_name.name, by_path.name);
    EXPECT_EQ(by_name.gemm_efficiency_vs_flops.y, by_path.gemm_efficiency_vs_flops.y);
}

TEST_F(ProfileDir, UnknownKeyIsAnErrorWithASuggestion) {
    const std::string e = error_after([](Json& j) {
        Json& gemm = j["compute"]["gemm"];
        gemm["min_kernel_uss"] = gemm["min_kernel_us"];
        gemm.erase("min_kernel_us");
    });
    EXPECT_EQ(e, "profile a100-80gb-selene: compute.gemm.min_kernel_uss is not a known key "
                 "(did you mean 'min_kernel_us'?)");
}

TEST_F(ProfileDir, NonIncreasingCurveNamesThePoint) {
    const std::string e = error_after([](Json& j) {
        Json& points = j["compute"]["gemm"]["efficiency_vs_flops"]["points"];
        points[3]["x"] = points[2]["x"];
    });
    EXPECT_EQ(e,
              "profile a100-80gb-selene: compute.gemm.efficiency_vs_flops.points[3].x must be greater than "
              "the previous point's x (2.1e+09 <= 2.1e+09)");
}

TEST_F(ProfileDir, NegativeValueIsRejected) {
    const std::string e = error_after([](Json& j) { j["gpu"]["hbm_GBps"]["value"] = -2039; });
    EXPECT_EQ(e, "profile a100-80gb-selene: gpu.hbm_GBps.value must be greater than 0, got -2039");
}

TEST_F(ProfileDir, MissingFileNamesTheDirectoryAndTheAvailableProfiles) {
    std::ofstream(dir_ / "b-profile.json") << "{}";
    std::ofstream(dir_ / "a-profile.json") << "{}";
    try {
        (void)load_hardware_profile("a100", dir_.string());
        FAIL() << "loading succeeded";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), "hardware.profile: no profile named 'a100' in " + dir_.string() +
                                             " (available: a-profile, b-profile)");
    }
    const std::string path = (dir_ / "missing.json").string();
    try {
        (void)load_hardware_profile(path, "/unused");
        FAIL() << "loading succeeded";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), "hardware.profile: cannot open " + path);
    }
}

TEST_F(ProfileDir, EfficiencyOutsideUnitIntervalIsRejected) {
    EXPECT_EQ(
        error_after([](Json& j) { j["compute"]["attention"]["score_efficiency"]["value"] = 1.2; }),
        "profile a100-80gb-selene: compute.attention.score_efficiency.value must be an efficiency in (0, 1], "
        "got 1.2");
    EXPECT_EQ(
        error_after([](Json& j) { j["memory_bound"]["efficiency_vs_bytes"]["points"][1]["y"] = 0; }),
        "profile a100-80gb-selene: memory_bound.efficiency_vs_bytes.points[1].y must be an efficiency in "
        "(0, 1], got 0");
}

TEST_F(ProfileDir, CurvePointsMustBePositiveAndPresent) {
    EXPECT_EQ(
        error_after(
            [](Json& j) { j["network"]["inter_node"]["busbw_efficiency_vs_bytes"]["points"][0]["x"] = 0; }),
        "profile a100-80gb-selene: network.inter_node.busbw_efficiency_vs_bytes.points[0].x must be greater "
        "than 0, got 0");
    EXPECT_NE(error_after([](Json& j) {
                  j["compute"]["gemm"]["efficiency_vs_flops"]["points"] = Json::array();
              }).find("compute.gemm.efficiency_vs_flops.points must be a non-empty array"),
              std::string::npos);
}

TEST_F(ProfileDir, MissingFieldAndWrongTypeAreNamed) {
    EXPECT_EQ(error_after([](Json& j) { j["network"]["inter_node"].erase("nic_GBps"); }),
              "profile a100-80gb-selene: network.inter_node.nic_GBps is required");
    EXPECT_EQ(error_after([](Json& j) { j["gpu"]["peak_tflops"]["value"] = "312"; }),
              "profile a100-80gb-selene: gpu.peak_tflops.value must be a number, got \"312\"");
    EXPECT_EQ(error_after([](Json& j) { j["node"]["gpus_per_node"]["value"] = 8.0; }),
              "profile a100-80gb-selene: node.gpus_per_node.value must be an integer (no decimal point or "
              "exponent), "
              "got 8.0");
}

TEST_F(ProfileDir, ProvenanceIsChecked) {
    EXPECT_EQ(error_after([](Json& j) { j["gpu"]["hbm_GBps"]["kind"] = "datasheeet"; }),
              "profile a100-80gb-selene: gpu.hbm_GBps.kind must be one of datasheet, measured, derived, "
              "sim_config, "
              "assumed; got \"datasheeet\" (did you mean 'datasheet'?)");
    EXPECT_EQ(
        error_after([](Json& j) { j["gpu"]["hbm_GBps"]["source"] = "S-DEVQQ deviceQuery"; }),
        "profile a100-80gb-selene: gpu.hbm_GBps.source cites 'S-DEVQQ', which is not in the sources table "
        "(did you mean 'S-DEVQ'?)");
    EXPECT_EQ(error_after([](Json& j) { j["gpu"]["hbm_GBps"]["source"] = "a datasheet"; }),
              "profile a100-80gb-selene: gpu.hbm_GBps.source must cite an id from the sources table for kind "
              "'datasheet'");
    EXPECT_EQ(error_after([](Json& j) { j["gpu"]["hbm_GBps"].erase("kind"); }),
              "profile a100-80gb-selene: gpu.hbm_GBps.kind is required");
}

TEST_F(ProfileDir, DocumentLevelRules) {
    EXPECT_NE(
        error_of_text("{\"schema\": ").find("profile a100-80gb-selene: invalid JSON at line 1, column 12: "),
        std::string::npos);
    // One strict reader for every input file (sim/core/strict_json): a repeated key is refused, not resolved.
    EXPECT_EQ(error_of_text(R"({"schema": "a", "name": "b", "name": "c"})"),
              "profile a100-80gb-selene: name: duplicate key (each key may appear only once)");
    EXPECT_EQ(error_after([](Json& j) { j["name"] = "other"; }),
              "profile a100-80gb-selene: name must match the file name 'a100-80gb-selene', got 'other'");
    EXPECT_EQ(error_after([](Json& j) { j["gpu"]["memory_reserved_bytes"]["value"] = 85198045184; }),
              "profile a100-80gb-selene: gpu.memory_reserved_bytes.value must be less than "
              "gpu.memory_visible_bytes "
              "(85198045184), got 85198045184");
    // The 8-GPU all-reduce latency (6.6 + 14·latency_per_hop_us) must stay under the 43.83 µs measured at 32
    // KiB.
    EXPECT_NE(
        error_after([](Json& j) { j["network"]["intra_node"]["latency_per_hop_us"]["value"] = 3.0; })
            .find(
                "profile a100-80gb-selene: network.intra_node.latency_base_us gives an all-reduce latency of "
                "48.6 us"),
        std::string::npos);
}

TEST_F(ProfileDir, HostAndVariabilitySectionsAreOptionalAndChecked) {
    // The shipped values (a100-80gb-selene.json, with their sources there).
    const HardwareProfile shipped = load_hardware_profile(kShipped, kProfileDir);
    ASSERT_TRUE(shipped.host && shipped.variability);
    EXPECT_EQ(shipped.host->kernel_launch_us, 6.7);
    EXPECT_EQ(shipped.host->op_dispatch_us, 10.0);
    EXPECT_EQ(shipped.host->collective_dispatch_us, 25.0);
    EXPECT_EQ(shipped.variability->gpu_slowdown_stddev, 0.02);
    // Without them a profile still loads (the knobs that need them say so when asked).
    Json j = shipped_json();
    j.erase("host");
    j.erase("variability");
    std::ofstream(dir_ / (kShipped + ".json")) << j.dump(2);
    const HardwareProfile bare = load_hardware_profile(kShipped, dir_.string());
    EXPECT_FALSE(bare.host);
    EXPECT_FALSE(bare.variability);
    EXPECT_EQ(
        error_after([](Json& k) { k["variability"]["gpu_slowdown_stddev"]["value"] = 0.5; }),
        "profile a100-80gb-selene: variability.gpu_slowdown_stddev.value must be less than 0.5 (a spread "
        "of half the median speed or more is a broken GPU, not variability), got 0.5");
    EXPECT_EQ(error_after([](Json& k) { k["host"].erase("op_dispatch_us"); }),
              "profile a100-80gb-selene: host.op_dispatch_us is required");
}

}  // namespace
}  // namespace trainsim::cost
