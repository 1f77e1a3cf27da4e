// Every shipped GPU profile against the datasheet values recorded with it (tests/data/gpu_datasheets.json):
// peaks and memory equal the datasheet, and no link is modelled faster than its line rate.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/cost/hardware_profile.h"

namespace trainsim::cost {
namespace {

const std::string kSourceDir = TRAINSIM_SOURCE_DIR;
const std::string kProfileDir = kSourceDir + "/scenarios/hardware";

nlohmann::json datasheets() {
    std::ifstream in(kSourceDir + "/tests/data/gpu_datasheets.json");
    return nlohmann::json::parse(in).at("profiles");
}

TEST(GpuGenerations, EveryShippedProfileHasADatasheetRecordAndLoads) {
    const nlohmann::json sheets = datasheets();
    for (const auto& entry : std::filesystem::directory_iterator(kProfileDir)) {
        if (entry.path().extension() != ".json") {
            continue;
        }
        const std::string name = entry.path().stem().string();
        EXPECT_TRUE(sheets.contains(name)) << name << " has no datasheet record";
        EXPECT_NO_THROW((void)load_hardware_profile(name, kProfileDir)) << name;
    }
}

TEST(GpuGenerations, PeaksMemoryAndLinksAgreeWithTheDatasheet) {
    const nlohmann::json sheets = datasheets();
    for (const auto& [name, ds] : sheets.items()) {
        SCOPED_TRACE(name);
        const HardwareProfile p = load_hardware_profile(name, kProfileDir);
        // Peaks and HBM bandwidth are the datasheet's, to its rounding.
        EXPECT_NEAR(p.peak_tflops, ds.at("bf16_dense_tflops").get<double>(), 0.5);
        EXPECT_NEAR(p.hbm_GBps, ds.at("hbm_GBps").get<double>(), 0.5);
        if (ds.at("fp8_dense_tflops").is_null()) {
            EXPECT_FALSE(p.has_fp8());
        } else {
            ASSERT_TRUE(p.has_fp8());
            EXPECT_NEAR(p.fp8_peak_tflops, ds.at("fp8_dense_tflops").get<double>(), 0.5);
            // FP8 peak is twice the BF16 peak on Hopper and Blackwell.
            EXPECT_NEAR(p.fp8_peak_tflops / p.peak_tflops, 2.0, 0.002);
        }
        if (!ds.at("compute_capability").is_null()) {
            EXPECT_EQ(p.compute_capability, ds.at("compute_capability").get<double>());
        }
        EXPECT_EQ(p.num_sms, ds.at("sms").get<int>());
        // CUDA sees a little more or less than the marketing GB (GiB vs GB, ECC, reserved rows).
        const double hbm_bytes = ds.at("hbm_GB").get<double>() * 1e9;
        EXPECT_GT(static_cast<double>(p.memory_visible.value), 0.97 * hbm_bytes);
        EXPECT_LT(static_cast<double>(p.memory_visible.value), 1.1 * hbm_bytes);

        // The NVLink domain is the node the layout sees.
        EXPECT_EQ(p.gpus_per_node, ds.at("nvlink_domain_gpus").get<int>());
        // NICs: the count is the datasheet's; the effective rate is below the line rate, and not far below.
        EXPECT_EQ(p.inter_node.nics_per_node, ds.at("nics_per_node").get<int>());
        const double nic_line_GBps = ds.at("nic_Gbps").get<double>() / 8.0;
        EXPECT_LE(p.inter_node.nic_GBps, nic_line_GBps);
        EXPECT_GE(p.inter_node.nic_GBps, 0.9 * nic_line_GBps);
        // NVLink: one pair cannot send faster than the GPU's links; an all-reduce's bus bandwidth cannot
        // beat 2(n-1)/n times the link rate even with in-switch reduction (each GPU sends and receives
        // S once, nccl-tests PERFORMANCE.md), and a ring without it reaches at most the link rate.
        const double nvlink = ds.at("nvlink_GBps").get<double>();
        EXPECT_LE(p.intra_node.p2p_GBps, nvlink);
        EXPECT_GE(p.intra_node.p2p_GBps, 0.6 * nvlink);
        const int n0 = p.intra_node.measured_group_size;
        const auto& busbw = p.intra_node.busbw_GBps_vs_bytes.y;
        const double best = *std::max_element(busbw.begin(), busbw.end());
        EXPECT_LE(best, 2.0 * (n0 - 1) / n0 * nvlink);
        EXPECT_GE(best, 0.6 * nvlink);
    }
}

}  // namespace
}  // namespace trainsim::cost
