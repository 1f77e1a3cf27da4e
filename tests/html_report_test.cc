// trainsim run --report: the page parses (every element closed, properly nested), holds its four
// charts and the what-if table, and states the run's numbers.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/test_support.h"

namespace trainsim {
namespace {

struct Parsed {
    std::vector<std::string> open_tags;  // every start tag, in order
    std::string error;                   // empty when well formed
};

// A strict tag walker: text and attributes are skipped, comments and the doctype too; each end tag
// must close the innermost open element; self-closing tags (<meta/>) close themselves.
Parsed parse(const std::string& page) {
    Parsed p;
    std::vector<std::string> stack;
    std::size_t i = 0;
    while ((i = page.find('<', i)) != std::string::npos) {
        const std::size_t end = page.find('>', i);
        if (end == std::string::npos) {
            p.error = "unterminated tag at " + std::to_string(i);
            return p;
        }
        std::string tag = page.substr(i + 1, end - i - 1);
        i = end + 1;
        if (tag.starts_with("!")) {
            continue;
        }
        const bool closing = tag.starts_with("/");
        const bool self_closing = tag.ends_with("/");
        const std::size_t name_start = closing ? 1 : 0;
        const std::string name = tag.substr(name_start, tag.find_first_of(" /", name_start) - name_start);
        if (closing) {
            if (stack.empty() || stack.back() != name) {
                p.error = "</" + name + "> closes <" + (stack.empty() ? "" : stack.back()) + ">";
                return p;
            }
            stack.pop_back();
        } else {
            p.open_tags.push_back(name);
            if (!self_closing) {
                stack.push_back(name);
            }
        }
    }
    if (!stack.empty()) {
        p.error = "<" + stack.back() + "> never closed";
    }
    return p;
}

TEST(HtmlReport, IsOneWellFormedPageWithChartsAndTables) {
    const std::string scenario =
        testing::source_path("scenarios/korthikanti-22b.json") +
        " --set model.num_layers=8 --set parallelism.pipeline_model_parallel_size=2"
        " --set training.global_batch_size=8"
        " --set training.optimizer_param_copy=true --set training.zero_grad_buffer=true";
    const std::string path = ::testing::TempDir() + "report.html";
    const auto r = testing::run_trainsim("run " + scenario + " --format json --report " + path);
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    std::ifstream in(path);
    const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const Parsed parsed = parse(page);
    ASSERT_EQ(parsed.error, "");
    const std::multiset<std::string> tags(parsed.open_tags.begin(), parsed.open_tags.end());
    EXPECT_EQ(tags.count("svg"), 3U);  // breakdown, memory, critical path
    EXPECT_EQ(tags.count("section"), 5U);
    EXPECT_EQ(tags.count("script"), 0U);  // self-contained, nothing to run
    EXPECT_EQ(tags.count("link"), 0U);
    for (const char* id : {"summary", "breakdown", "memory", "critical-path", "whatif"}) {
        EXPECT_NE(page.find(std::string("<section id=\"") + id + "\">"), std::string::npos) << id;
    }
    char time[32];
    std::snprintf(time, sizeof time, "%.4f s", j["iteration_time_s"].get<double>());
    EXPECT_NE(page.find(std::string("<th>iteration time</th><td>") + time), std::string::npos);
    EXPECT_NE(page.find("+10 % GEMM efficiency"), std::string::npos);
    EXPECT_NE(page.find("stage 1"), std::string::npos);
    // The optimizer's extra passes have their parts in the breakdown chart when they are on.
    EXPECT_NE(page.find("fp32-&gt;bf16 param copy"), std::string::npos);
    EXPECT_NE(page.find("grad buffer zeroing"), std::string::npos);
}

TEST(HtmlReport, UnwritablePathIsAnInputError) {
    const auto r = testing::run_trainsim("run " + testing::source_path("scenarios/korthikanti-22b.json") +
                                         " --report /nonexistent-dir/report.html");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--report"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace trainsim
