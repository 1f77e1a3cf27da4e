#include "calibrate/fit/fit_spec.h"

#include <filesystem>

#include "calibrate/measure/measurement.h"
#include "calibrate/measure/source_id.h"
#include "calibrate/measure/strict_json.h"

namespace trainsim::calibrate {

FitSpec read_fit_spec(const std::string& path) {
    const StrictJson json(path);
    const OrderedJson root = json.parse(read_text_file(path));
    json.expect_keys(root, "", {"schema", "inputs", "profile"}, {"description"});
    if (json.text(root, "", "schema") != kFitSpecSchema) {
        json.fail("schema",
                  std::string("must be \"") + kFitSpecSchema + "\", got " + describe_json(root.at("schema")));
    }
    FitSpec spec;
    spec.path = path;
    const std::filesystem::path folder = std::filesystem::path(path).parent_path();
    const OrderedJson& inputs = json.array(root, "", "inputs");
    if (inputs.empty()) {
        json.fail("inputs", "must list at least one measurement file");
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const std::string p = element_path("inputs", i);
        json.expect_keys(inputs[i], p, {"file"}, {"op", "ranks", "nodes"});
        InputSpec input;
        input.path = (folder / json.text(inputs[i], p, "file")).lexically_normal().string();
        if (inputs[i].contains("op")) {
            const std::string op = json.text(inputs[i], p, "op");
            input.nccl.op = collective_kind_from(op);
            if (!input.nccl.op) {
                json.fail(member_path(p, "op"),
                          "must be all_reduce, all_gather, reduce_scatter or send_recv, got '" + op + "'");
            }
        }
        if (inputs[i].contains("ranks")) {
            input.nccl.ranks = static_cast<int>(json.integer(inputs[i], p, "ranks", 2, kMaxRanks));
        }
        if (inputs[i].contains("nodes")) {
            input.nccl.nodes = static_cast<int>(json.integer(inputs[i], p, "nodes", 1, kMaxRanks));
        }
        spec.inputs.push_back(input);
    }
    spec.profile = json.object(root, "", "profile");
    return spec;
}

}  // namespace trainsim::calibrate
