// trainsim whatif: profile scaling touches exactly its parameter's fields, the layout nudges are valid
// neighbours, and the sensitivities move the way the model says they must.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "sim/cost/cost_model.h"
#include "sim/cost/profile_scaling.h"
#include "sim/whatif/sensitivity.h"
#include "sim/whatif/variation.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

cost::HardwareProfile selene() {
    return cost::load_hardware_profile("a100-80gb-selene", testing::source_path("scenarios/hardware"));
}

TEST(ProfileScaling, NicBandwidthScalesOnlyTheNic) {
    const cost::HardwareProfile p = selene();
    const cost::HardwareProfile q = cost::scale_profile(p, cost::ProfileParameter::NicBandwidth, 1.1);
    EXPECT_DOUBLE_EQ(q.inter_node.nic_GBps, p.inter_node.nic_GBps * 1.1);
    EXPECT_EQ(q.inter_node.latency_base_us, p.inter_node.latency_base_us);
    EXPECT_EQ(q.intra_node.p2p_GBps, p.intra_node.p2p_GBps);
    EXPECT_EQ(q.hbm_GBps, p.hbm_GBps);
    EXPECT_EQ(q.gemm_efficiency_vs_flops.y, p.gemm_efficiency_vs_flops.y);
    EXPECT_NE(q.description.find("NIC bandwidth ×1.1"), std::string::npos);
}

TEST(ProfileScaling, EfficienciesStopAtThePeak) {
    const cost::HardwareProfile p = selene();
    const cost::HardwareProfile q = cost::scale_profile(p, cost::ProfileParameter::GemmEfficiency, 10.0);
    for (std::size_t i = 0; i < p.gemm_efficiency_vs_flops.y.size(); ++i) {
        EXPECT_EQ(q.gemm_efficiency_vs_flops.y[i], 1.0);
    }
    EXPECT_NE(q.gemm_efficiency_vs_flops.source.find("×10 (whatif)"), std::string::npos);
    const cost::HardwareProfile r = cost::scale_profile(p, cost::ProfileParameter::GemmEfficiency, 1.1);
    EXPECT_DOUBLE_EQ(r.gemm_efficiency_vs_flops.y[0], std::min(1.0, p.gemm_efficiency_vs_flops.y[0] * 1.1));
}

// A large GEMM's time is its FLOPs over peak × efficiency: 10 % more efficiency is 1/1.1 of the time,
// as long as the curve stays below 1 (the largest point of the A100 curve is below 0.91).
TEST(ProfileScaling, GemmTimeFollowsTheEfficiency) {
    const cost::HardwareProfile p = selene();
    ASSERT_LT(p.gemm_efficiency_vs_flops.y.back() * 1.1, 1.0);
    const cost::CostModel base(p);
    const cost::CostModel faster(cost::scale_profile(p, cost::ProfileParameter::GemmEfficiency, 1.1));
    const cost::GemmShape shape{8192, 8192, 8192, 1};
    EXPECT_NEAR(faster.gemm(shape).value, base.gemm(shape).value / 1.1, 1e-12);
}

TEST(ProfileScaling, HbmBandwidthShortensMemoryBoundKernelsOnly) {
    const cost::HardwareProfile p = selene();
    const cost::CostModel base(p);
    const cost::CostModel faster(cost::scale_profile(p, cost::ProfileParameter::HbmBandwidth, 2.0));
    const cost::GemmShape shape{8192, 8192, 8192, 1};
    EXPECT_EQ(faster.gemm(shape).value, base.gemm(shape).value);
    const Bytes moved{std::int64_t{1} << 30};
    const double launch = p.memory_bound_launch_us * 1e-6;
    EXPECT_NEAR(faster.memory_bound(moved, cost::MemoryBoundKind{}).value - launch,
                (base.memory_bound(moved, cost::MemoryBoundKind{}).value - launch) / 2.0, 1e-12);
}

TEST(Variations, LayoutNeighboursOf530BAreValidAndNamed) {
    const config::Scenario s = testing::shipped_scenario("mt-nlg-530b-2240gpu");
    std::vector<std::string> labels;
    for (const whatif::Variation& v : whatif::layout_variations(s)) {
        EXPECT_NO_THROW(config::validate_scenario(v.scenario)) << v.label;
        labels.push_back(v.label);
    }
    // 105 layers over p = 35 in v = 3 chunks: p can only move where 105/p is still a multiple of 3; d
    // only where the 2240/d micro-batches are still a multiple of p (the interleaved schedule's rule).
    const std::vector<std::string> expected = {"t 8 → 4 (d 8 → 16)",
                                               "t 8 → 16 (d 8 → 4)",
                                               "p 35 → 7 (d 8 → 40)",
                                               "v 3 → 1",
                                               "d 8 → 4",
                                               "d 8 → 16",
                                               "micro_batch 1 → 2",
                                               "recompute selective → none",
                                               "recompute selective → full"};
    EXPECT_EQ(labels, expected);
}

config::Scenario small_pipeline() {
    return testing::shipped_scenario("korthikanti-22b", {{"model.num_layers", "8"},
                                                         {"parallelism.pipeline_model_parallel_size", "2"},
                                                         {"training.global_batch_size", "8"},
                                                         {"training.recompute_granularity", "selective"}});
}

TEST(WhatIf, FasterHardwareIsNeverSlowerAndRowsAreRanked) {
    whatif::WhatIfOptions options;
    options.jobs = 2;
    const whatif::WhatIf w = whatif::run_whatif(small_pipeline(), selene(), options);
    ASSERT_GE(w.rows.size(), 7U);
    double previous = -1.0;
    for (const whatif::Sensitivity& s : w.rows) {
        if (!s.error.empty() || !s.fits_in_memory) {
            continue;
        }
        EXPECT_GE(s.gpu_time_change, previous) << s.label;  // the largest saving first
        previous = s.gpu_time_change;
        if (s.num_gpus == w.baseline.num_gpus) {
            EXPECT_DOUBLE_EQ(s.gpu_time_change, s.change);
        }
        if (s.profile) {
            const bool is_latency =
                s.knob.find("latency") != std::string::npos || s.knob == "launch_overhead";
            // More bandwidth or efficiency never slows a run; more latency never speeds it up.
            if (is_latency) {
                EXPECT_GE(s.change, 0.0) << s.label;
            } else {
                EXPECT_LE(s.change, 0.0) << s.label;
            }
            EXPECT_EQ(s.num_gpus, w.baseline.num_gpus);
            EXPECT_EQ(s.peak_change.value, 0) << s.label;  // pricing does not move memory
        }
    }
    // Compute dominates this small run's critical path, and GEMM efficiency tops the profile rows.
    EXPECT_EQ(w.critical_path.biggest_share(), "compute");
    const auto first_profile =
        std::find_if(w.rows.begin(), w.rows.end(), [](const whatif::Sensitivity& s) { return s.profile; });
    ASSERT_NE(first_profile, w.rows.end());
    EXPECT_EQ(first_profile->knob, "gemm_efficiency");
}

TEST(WhatIf, FullRecomputeCostsTimeAndSavesMemory) {
    whatif::WhatIfOptions options;
    options.jobs = 1;
    const whatif::WhatIf w = whatif::run_whatif(small_pipeline(), selene(), options);
    bool found = false;
    for (const whatif::Sensitivity& s : w.rows) {
        if (s.label == "recompute selective → full") {
            found = true;
            EXPECT_GT(s.change, 0.0);
            EXPECT_LT(s.peak_change.value, 0);
        }
    }
    EXPECT_TRUE(found);
}

TEST(WhatIf, CliWritesTableJsonCsvAndSvg) {
    const std::string scenario = testing::source_path("scenarios/korthikanti-22b.json") +
                                 " --set model.num_layers=8 --set parallelism.pipeline_model_parallel_size=2"
                                 " --set training.global_batch_size=8 --jobs 2";
    const std::string svg = ::testing::TempDir() + "whatif_chart.svg";
    const auto text = testing::run_trainsim("whatif " + scenario + " --plot " + svg);
    ASSERT_EQ(text.status, 0) << text.err;
    EXPECT_NE(text.out.find("+10 % NIC bandwidth"), std::string::npos);
    EXPECT_NE(text.out.find("critical path's biggest share: compute"), std::string::npos);
    std::ifstream in(svg);
    const std::string chart((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(chart.rfind("<svg", 0), 0U);
    EXPECT_NE(chart.find("+10 % GEMM efficiency"), std::string::npos);
    EXPECT_NE(chart.find("</svg>"), std::string::npos);

    const auto json = testing::run_trainsim("whatif " + scenario + " --format json --profile-only");
    ASSERT_EQ(json.status, 0) << json.err;
    const auto j = nlohmann::json::parse(json.out);
    EXPECT_EQ(j["sensitivities"].size(), 7U);
    EXPECT_EQ(j["sensitivities"][0]["knob"], "gemm_efficiency");
    const auto csv = testing::run_trainsim("whatif " + scenario + " --format csv --profile-only");
    ASSERT_EQ(csv.status, 0) << csv.err;
    EXPECT_EQ(csv.out.rfind("rank,knob,variation,kind,iteration_time_s", 0), 0U);

    const auto png = testing::run_trainsim("whatif " + scenario + " --plot chart.png");
    EXPECT_EQ(png.status, 2);
    EXPECT_NE(png.err.find("--plot=chart.png must name an .svg file"), std::string::npos);
    const auto percent = testing::run_trainsim("whatif " + scenario + " --percent 0");
    EXPECT_EQ(percent.status, 2);
    EXPECT_NE(percent.err.find("--percent"), std::string::npos);
}

}  // namespace
}  // namespace trainsim
