// The shipped A100 profile is the output of `fit` on the published measurements kept in calibrate/data:
// regenerating it must give the same curves and values, and the same file.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "calibrate/measure/json_writer.h"
#include "calibrate/measure/source_id.h"
#include "calibrate/tests/calibrate_test_support.h"

namespace trainsim::calibrate {
namespace {

const std::string kShipped = "scenarios/hardware/a100-80gb-selene.json";
const std::string kSpec = "calibrate/data/a100-80gb-selene.fit.json";

// Every curve (an object with "points") and every value object, by path.
void collect(const OrderedJson& node, const std::string& path, std::map<std::string, OrderedJson>& out) {
    if (node.is_object()) {
        if (node.contains("points")) {
            OrderedJson xy = OrderedJson::array();
            for (const auto& p : node.at("points")) {
                xy.push_back({p.at("x"), p.at("y")});
            }
            out[path] = xy;
        }
        if (node.contains("value")) {
            out[path] = node.at("value");
        }
        for (const auto& [key, value] : node.items()) {
            collect(value, path.empty() ? key : path + "." + key, out);
        }
    }
}

// "" when equal, else the first line that differs, both ways.
std::string first_difference(const std::string& a, const std::string& b) {
    std::istringstream sa(a);
    std::istringstream sb(b);
    std::string la;
    std::string lb;
    for (int line = 1;; ++line) {
        const bool more_a = static_cast<bool>(std::getline(sa, la));
        const bool more_b = static_cast<bool>(std::getline(sb, lb));
        if (!more_a && !more_b) {
            return "";
        }
        if (!more_a || !more_b || la != lb) {
            return "line " + std::to_string(line) + ":\n  fitted:  " + (more_a ? la : "(end)") +
                   "\n  shipped: " + (more_b ? lb : "(end)");
        }
    }
}

TEST(A100Regeneration, FitOfThePublishedMeasurementsIsTheShippedProfile) {
    const testing::TempDir dir;
    const std::string out = dir.path("a100-80gb-selene.json");
    // From the source root, as a user regenerates it: the citations name repository paths.
    const testing::CommandResult r = testing::calibrate("fit --spec " + kSpec + " --output '" + out + "'");
    ASSERT_EQ(r.status, 0) << r.err;

    const std::string shipped_text = read_text_file(testing::source_path(kShipped));
    const std::string fitted_text = read_text_file(out);
    std::map<std::string, OrderedJson> shipped;
    std::map<std::string, OrderedJson> fitted;
    collect(OrderedJson::parse(shipped_text), "", shipped);
    collect(OrderedJson::parse(fitted_text), "", fitted);
    EXPECT_GE(shipped.size(), 30U);
    for (const auto& [path, value] : shipped) {
        ASSERT_TRUE(fitted.count(path)) << path;
        EXPECT_EQ(fitted.at(path), value) << path;  // numbers and their JSON types
    }
    EXPECT_EQ(fitted.size(), shipped.size());
    // Then the whole file: notes, provenance and layout too.
    EXPECT_EQ(first_difference(fitted_text, shipped_text), "")
        << "regenerate it with: build/calibrate/trainsim-calibrate fit --spec " << kSpec << " --output "
        << kShipped;
}

TEST(A100Regeneration, EveryCurveOfTheShippedProfileCitesItsData) {
    const OrderedJson p = OrderedJson::parse(read_text_file(testing::source_path(kShipped)));
    const std::string data = "S-DATA-A100-";
    for (const char* pointer :
         {"/compute/gemm/efficiency_vs_flops", "/memory_bound/efficiency_vs_bytes",
          "/network/intra_node/busbw_GBps_vs_bytes", "/network/inter_node/busbw_efficiency_vs_bytes"}) {
        const OrderedJson& curve = p.at(OrderedJson::json_pointer(pointer));
        ASSERT_TRUE(curve.contains("note")) << pointer;
        EXPECT_NE(curve.at("note").get<std::string>().find(data), std::string::npos) << pointer;
        EXPECT_NE(curve.at("note").get<std::string>().find("valid from"), std::string::npos) << pointer;
    }
    for (const char* id :
         {"S-DATA-A100-PUBLISHED-MEASUREMENTS", "S-DATA-A100-ALL-REDUCE-PERF", "S-DATA-A100-SENDRECV-PERF"}) {
        EXPECT_TRUE(p.at("sources").contains(id)) << id;
    }
}

}  // namespace
}  // namespace trainsim::calibrate
