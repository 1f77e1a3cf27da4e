// `trainsim validate`: the shipped published measurements pass within their stated tolerances, a value
// outside its tolerance makes the command exit 1, and a bad validation file is one line with status 2.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "sim/core/input_error.h"
#include "sim/validate/validation_case.h"
#include "sim/validate/validation_output.h"
#include "sim/validate/validation_run.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using testing::run_trainsim;
using testing::source_path;

const std::string kShipped = source_path("scenarios/validation/korthikanti-2022.json");
const std::string kOpen = source_path("scenarios/validation/open-discrepancies.json");

// The cases of a shipped validation file known not to pass: `trainsim validate` exits 1 on it.
nlohmann::json failing_cases(const std::string& file) {
    const auto r = run_trainsim("validate " + source_path("scenarios/validation/" + file) + " --format json");
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    return nlohmann::json::parse(r.out)["cases"];
}

std::size_t lines(const std::string& s) {
    return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

// A validation file in the shipped folder (so that "../korthikanti-22b.json" resolves), unique to this
// test process, removed when it goes out of scope.
class TempValidationFile {
public:
    TempValidationFile(const std::string& name, const std::string& text)
        : path_(source_path("scenarios/validation/.test-" + std::to_string(::getpid()) + "-" + name +
                            ".json")) {
        std::ofstream(path_) << text;
    }
    ~TempValidationFile() { std::filesystem::remove(path_); }
    TempValidationFile(const TempValidationFile&) = delete;
    TempValidationFile& operator=(const TempValidationFile&) = delete;
    [[nodiscard]] const std::string& path() const { return path_; }

private:
    std::string path_;
};

// One Table 4 case as JSON text; `extra` is spliced into the case object.
std::string one_case(const std::string& value, const std::string& extra = "",
                     const std::string& unit = "ms") {
    return R"({"cases": [{"id": "t4-forward", "scenario": "../korthikanti-22b.json", "metric": "per_layer_forward_time",
      "value": )" +
           value + R"(, "unit": ")" + unit +
           R"(", "tolerance": {"relative": 0.10}, "source": "Korthikanti 2022 Table 4")" + extra + "}]}";
}

validate::ValidationFile parse(const std::string& text) {
    return validate::parse_validation_file(text, "cases.json", source_path("scenarios/validation"));
}

TEST(Validate, ShippedCasesPassWithinTheirTolerances) {
    const auto r = run_trainsim("validate " + kShipped + " --format json");
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["failed"], 0);
    EXPECT_GE(j["cases"].size(), 30u);
    for (const auto& c : j["cases"]) {
        EXPECT_TRUE(c["pass"].get<bool>()) << c["id"] << ": " << c["simulated"] << " vs " << c["published"];
        EXPECT_FALSE(c["source"].get<std::string>().empty()) << c["id"];
    }
}

TEST(Validate, NemoH100Fp8TableMeetsIssue15sTarget) {
    // All twelve rows of NeMo 24.07's DGX-H100 FP8 table (GPT3-5B, GPT3-20B, GPT3-175B on 128 and 512 GPUs,
    // Nemotron-340B, Llama 2 7B/13B/70B, Llama 3 8B and 70B with CP 2, Nemotron-22B and -8B) against
    // h100-80gb-dgx, no constant fitted to them (results/README.md): issue 15's target is every row within
    // 15 % and a mean |error| of at most 7 %. Recorded: 6.32 % (7.31 % and Nemotron-8B +18.0 % before TE's
    // fused RoPE and Megatron-Core's loss ran at their published H100 speeds, kind_factors rope,
    // cross_entropy and cross_entropy_fused); it must not grow past 6.5 % unnoticed.
    const auto r = run_trainsim("validate " + source_path("scenarios/validation/nemo-24.07-h100-fp8.json") +
                                " --format json");
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["cases"].size(), 12u);
    double sum = 0.0;
    for (const auto& c : j["cases"]) {
        EXPECT_EQ(c["profile"], "h100-80gb-dgx") << c["id"];
        EXPECT_TRUE(c["pass"].get<bool>()) << c["id"] << ": " << c["simulated"] << " vs " << c["published"];
        EXPECT_LT(std::abs(c["relative_error"].get<double>()), 0.15) << c["id"];
        sum += std::abs(c["relative_error"].get<double>());
    }
    EXPECT_LT(sum / 12.0, 0.065);
}

TEST(Validate, BlackwellMoeRowsRunInFp8AndAreAllSimulatedFast) {
    // Megatron-Bridge 25.11 MXFP8 MoE rows on B200/GB200 (scenarios/README.md, "Blackwell MoE rows"): each
    // simulates (FP8 with experts and MLA), and each is known to be simulated 35-235 % fast (the fixed
    // per-layer cost the published MBS pair implies is not modelled). A row that comes within its
    // tolerance, or turns slow, changes this file's story: update the README and move it.
    const nlohmann::json cases = failing_cases("megatron-bridge-25.11-blackwell-moe.json");
    ASSERT_EQ(cases.size(), 6u);
    for (const auto& c : cases) {
        EXPECT_FALSE(c["pass"].get<bool>()) << c["id"];
        EXPECT_GT(c["relative_error"].get<double>(), 0.15) << c["id"];
    }
}

TEST(Validate, H100MoeCrossCheckIsSimulatedFastLikeTheBlackwellRows) {
    // The Bridge 25.11 Qwen3-30B-A3B row on DGX H100, on the profile whose dense NeMo rows pass: it is
    // simulated more than 2x fast as well, so the Blackwell rows' gap is the MoE layer's, not the
    // Blackwell profiles' (scenarios/README.md, "Blackwell MoE rows"). Once it passes, move it.
    const nlohmann::json cases = failing_cases("megatron-bridge-25.11-h100-moe.json");
    ASSERT_EQ(cases.size(), 1u);
    EXPECT_EQ(cases[0]["profile"], "h100-80gb-dgx");
    EXPECT_GT(cases[0]["relative_error"].get<double>(), 1.0);
}

TEST(Validate, ShippedCasesCoverEveryVisibleCaseTheSimulatorCanEvaluate) {
    // The ids of shared/reference/visible_cases.json that the shipped files carry (the Figure 7 case is
    // split per model); the README says why any other is left out.
    const std::vector<std::string> visible = {
        "korthikanti-t4-22B-baseline-norecompute-per_layer_forward_time",
        "korthikanti-t4-22B-selective-plus-sp-per_layer_fwd_plus_bwd_time",
        "korthikanti-fig8-530B-present-per-layer-overhead",
        "korthikanti-fig8-1T-fullrecompute-per-layer-overhead",
        "korthikanti-sec5-gpt3-selective-memory-saving",
        "korthikanti-sec5-mtnlg-selective-memory-saving",
        "korthikanti-fig7-sp-plus-selective-memory-fraction-530B",
        "korthikanti-appB-530B-output-dealloc-saving",
    };
    std::set<std::string> ids;
    for (const std::string& file : {kShipped, kOpen}) {
        for (const auto& c : validate::read_validation_file(file).cases) {
            ids.insert(c.id);
        }
    }
    for (const std::string& id : visible) {
        EXPECT_TRUE(ids.count(id)) << id;
    }
}

TEST(Validate, TextTableShowsSimulatedPublishedAndError) {
    const auto r = run_trainsim("validate " + kShipped);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("korthikanti-t4-22B-baseline-norecompute-per_layer_forward_time"),
              std::string::npos);
    EXPECT_NE(r.out.find("±10 %"), std::string::npos);
    EXPECT_NE(r.out.find(" 0 outside"), std::string::npos) << r.out;
    const auto csv = run_trainsim("validate " + kShipped + " --format csv");
    ASSERT_EQ(csv.status, 0) << csv.err;
    EXPECT_EQ(csv.out.rfind("id,metric,scenario,set,profile,unit,published,simulated,", 0), 0u);
    EXPECT_EQ(lines(csv.out), validate::read_validation_file(kShipped).cases.size() + 1);
}

TEST(Validate, OpenDiscrepanciesEvaluate) {
    // These are known to miss (README: open discrepancies); they must still run, not be bad input.
    const auto r = run_trainsim("validate " + kOpen + " --format json");
    EXPECT_TRUE(r.status == 0 || r.status == 1) << r.status << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    EXPECT_TRUE(nlohmann::json::accept(r.out)) << r.out;
}

TEST(Validate, ValueOutsideItsToleranceExitsOne) {
    // The simulated forward is ~8 ms; 100 ms published with ±10 % cannot pass.
    const TempValidationFile file("outside", one_case("100"));
    const auto r = run_trainsim("validate " + file.path());
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("1 outside"), std::string::npos) << r.out;
}

TEST(Validate, CaseWithinToleranceExitsZero) {
    const TempValidationFile file("inside", one_case("7.7"));
    const auto r = run_trainsim("validate " + file.path() + " --format json");
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    const auto c = nlohmann::json::parse(r.out)["cases"][0];
    EXPECT_NEAR(c["simulated"].get<double>(), 7.7, 0.77);
    EXPECT_NEAR(c["error"].get<double>(), c["simulated"].get<double>() - 7.7, 1e-12);
    EXPECT_EQ(c["profile"], "a100-80gb-selene");
}

TEST(Validate, BadScenarioOverrideInACaseIsOneLineWithStatusTwoAndNoTable) {
    const TempValidationFile file(
        "badset", one_case("7.7", R"(, "set": {"parallelism.tensor_model_parallel_size": 6})"));
    const auto r = run_trainsim("validate " + file.path());
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("case t4-forward"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("must divide model.num_attention_heads"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

// `--set` applies to every case, after the case's own set: the whole NeMo file without TE's split
// accumulator is faster on every row, the 512-GPU row keeps its own overrides, and a bad key is one line
// with status 2 and no table. (What the H200's measured profile does to these rows was run this way with
// --set hardware.profile=..., results/README.md.)
TEST(Validate, SetOverridesEveryCaseAfterItsOwn) {
    const std::string nemo = source_path("scenarios/validation/nemo-24.07-h100-fp8.json");
    const auto shipped = run_trainsim("validate " + nemo + " --format json");
    const auto fast =
        run_trainsim("validate " + nemo + " --format json --set training.fp8_split_accumulator=false");
    ASSERT_EQ(shipped.status, 0) << shipped.err;
    ASSERT_NE(fast.out, "") << fast.err;
    const auto a = nlohmann::json::parse(shipped.out)["cases"];
    const auto b = nlohmann::json::parse(fast.out)["cases"];
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_GT(b[i]["simulated"].get<double>(), a[i]["simulated"].get<double>()) << a[i]["id"];
    }
    // The 512-GPU row sets data_parallel_size 16 itself: still 4x the 128-GPU row's throughput, roughly.
    EXPECT_GT(b[3]["simulated"].get<double>(), 3.5 * b[2]["simulated"].get<double>());
    const auto bad = run_trainsim("validate " + nemo + " --set training.no_such_key=1");
    EXPECT_EQ(bad.status, 2);
    EXPECT_EQ(lines(bad.err), 1u) << bad.err;
    EXPECT_NE(bad.err.find("no_such_key"), std::string::npos) << bad.err;
    EXPECT_TRUE(bad.out.empty()) << bad.out;
}

TEST(Validate, MissingFileAndArgumentAreStatusTwo) {
    auto r = run_trainsim("validate /nonexistent/cases.json");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("/nonexistent/cases.json"), std::string::npos) << r.err;
    r = run_trainsim("validate");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("missing FILE"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty());
}

struct BadFile {
    std::string text;
    std::string message;
};

class ValidateBadFiles : public ::testing::TestWithParam<BadFile> {};

TEST_P(ValidateBadFiles, NameTheKeyAndTheRule) {
    try {
        (void)parse(GetParam().text);
        FAIL() << "accepted: " << GetParam().text;
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(GetParam().message), std::string::npos) << e.what();
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
}

INSTANTIATE_TEST_SUITE_P(
    Catalogue, ValidateBadFiles,
    ::testing::Values(
        BadFile{"{", "cases.json: invalid JSON"}, BadFile{"[]", "top level must be an object"},
        BadFile{R"({"cases": [], "cases": []})", "cases.json: cases: duplicate key"},
        BadFile{R"({"cases": []})", "cases: expected a non-empty list"},
        BadFile{R"({"case": []})", "case: unknown key (did you mean 'cases'?)"},
        BadFile{one_case("7.7", R"(, "tolerence": {"relative": 0.1})"),
                "cases[0] (t4-forward).tolerence: unknown key (did you mean 'tolerance'?)"},
        BadFile{R"({"cases": [{"scenario": "x.json"}]})", "cases[0].id: missing"},
        BadFile{one_case("\"7.7\""), "(t4-forward).value: expected a number, got \"7.7\""},
        BadFile{one_case("7.7", R"(, "comparison": "below")"), "comparison=\"below\" must be one of equal"},
        BadFile{
            R"({"cases": [{"id": "a", "scenario": "s.json", "metric": "per_layer_forward_time", "value": 1,
                  "unit": "GB", "tolerance": {"relative": 0.1}, "source": "x"}]})",
            "(a).unit=\"GB\" is not a unit of time (metric per_layer_forward_time): s, ms, us"},
        BadFile{R"({"cases": [{"id": "a", "scenario": "s.json", "metric": "per_layer_forward_tme", "value": 1,
                  "unit": "ms", "tolerance": {"relative": 0.1}, "source": "x"}]})",
                "did you mean 'per_layer_forward_time'"},
        BadFile{R"({"cases": [{"id": "a", "scenario": "s.json", "metric": "mfu", "value": 1, "unit": "%",
                  "tolerance": {"relative": 10}, "source": "x"}]})",
                "tolerance.relative=10 must be a fraction below 1"},
        BadFile{R"({"cases": [{"id": "a", "scenario": "s.json", "metric": "mfu", "value": 1, "unit": "%",
                  "tolerance": {"relative": 0.1, "absolute": 1}, "source": "x"}]})",
                "exactly one of 'relative'"},
        BadFile{R"({"cases": [{"id": "a", "scenario": "s.json", "metric": "mfu", "value": 1, "unit": "%",
                  "tolerance": {"absolute": -1}, "source": "x"}]})",
                "tolerance.absolute: must be ≥ 0"},
        BadFile{R"({"cases": [{"id": "a", "scenario": "s.json", "metric": "mfu", "value": 1, "unit": "%",
                  "tolerance": {"absolute": 1}}]})",
                "(a).source: missing"},
        BadFile{R"({"cases": [{"id": "a", "scenario": "s.json", "metric": "mfu", "value": 1, "unit": "%",
                  "tolerance": {"absolute": 1}, "source": "x", "set": [1]}]})",
                "(a).set: expected an object"},
        BadFile{R"({"cases": [{"id": "a", "scenario": "s.json", "metric": "mfu", "value": 1, "unit": "%",
                  "tolerance": {"absolute": 1}, "source": "x"}, {"id": "a", "scenario": "s.json", "metric": "mfu",
                  "value": 1, "unit": "%", "tolerance": {"absolute": 1}, "source": "x"}]})",
                "cases[1].id=\"a\" repeats an earlier case's id"}));

TEST(Validate, ComparisonsAndTolerances) {
    validate::ValidationCase c;
    c.value = 20.0;
    c.tolerance = {false, 0.5};
    c.comparison = validate::Comparison::AtMost;
    EXPECT_TRUE(validate::passes(c, 3.0));
    EXPECT_TRUE(validate::passes(c, 20.5));
    EXPECT_FALSE(validate::passes(c, 20.6));
    c.comparison = validate::Comparison::AtLeast;
    EXPECT_FALSE(validate::passes(c, 19.4));
    EXPECT_TRUE(validate::passes(c, 100.0));
    c.comparison = validate::Comparison::Equal;
    c.tolerance = {true, 0.10};
    EXPECT_TRUE(validate::passes(c, 22.0));
    EXPECT_TRUE(validate::passes(c, 18.0));
    EXPECT_FALSE(validate::passes(c, 22.1));
    EXPECT_FALSE(validate::passes(c, 17.9));
}

TEST(Validate, UnitsConvertFromTheMetricsBaseUnit) {
    // 7.7 ms published is compared with the simulated seconds × 1000; the same case in seconds agrees.
    auto file = parse(one_case("0.0077", "", "s"));
    const auto in_s = validate::run_validation(file, source_path("scenarios/hardware"));
    file = parse(one_case("7.7"));
    const auto in_ms = validate::run_validation(file, source_path("scenarios/hardware"));
    EXPECT_NEAR(in_s.results[0].simulated * 1e3, in_ms.results[0].simulated, 1e-9);
    EXPECT_NEAR(in_ms.results[0].relative_error, in_s.results[0].relative_error, 1e-9);
}

TEST(Validate, OverheadIsAgainstTheTensorParallelOnlyLayer) {
    // Full recompute re-runs the forward inside the backward: the overhead is at least forward/(fwd+bwd).
    const auto file = parse(R"({"cases": [
      {"id": "full", "scenario": "../korthikanti-22b.json", "set": {"training.recompute_granularity": "full"},
       "metric": "per_layer_time_overhead_vs_no_recompute_no_sp", "value": 39, "unit": "%",
       "tolerance": {"absolute": 100}, "source": "x"},
      {"id": "base", "scenario": "../korthikanti-22b.json",
       "metric": "per_layer_time_overhead_vs_no_recompute_no_sp", "value": 0, "unit": "%",
       "tolerance": {"absolute": 0.001}, "source": "x"}]})");
    const auto report = validate::run_validation(file, source_path("scenarios/hardware"));
    EXPECT_GT(report.results[0].simulated, 25.0);
    EXPECT_NEAR(report.results[1].simulated, 0.0, 1e-9);
    EXPECT_EQ(report.failures(), 0u);
}

}  // namespace
}  // namespace trainsim
