#include "sim/report/activation_table.h"

#include <cstdio>

#include "sim/workload/parameter_count.h"
#include "sim/workload/transformer_layer.h"

namespace trainsim::report {

ActivationTable activation_table(const config::Scenario& sc) {
    using config::RecomputeGranularity;
    struct Technique {
        const char* name;
        bool sequence_parallel;
        RecomputeGranularity recompute;
    };
    // Korthikanti Table 2 rows 2-6 (row 1, no parallelism, is the t = 1 case of row 2).
    const Technique techniques[] = {
        {"tensor parallel (baseline)", false, RecomputeGranularity::None},
        {"+ sequence parallel", true, RecomputeGranularity::None},
        {"+ selective recompute", false, RecomputeGranularity::Selective},
        {"+ sequence parallel + selective recompute", true, RecomputeGranularity::Selective},
        {"full recompute", false, RecomputeGranularity::Full},
    };
    ActivationTable table{sc.name, {}};
    workload::LayerShape shape = workload::layer_shape_of(sc);
    shape.recompute_modules = config::RecomputeModules{};  // Table 2's selective recompute: core attention
    double baseline = 0.0;
    for (const Technique& t : techniques) {
        // Sequence parallelism needs t > 1; with t = 1 it is the same as the baseline.
        shape.sequence_parallel = t.sequence_parallel && shape.tp > 1;
        const Bytes bytes = workload::layer_activation_bytes(shape, t.recompute);
        if (baseline == 0.0) {
            baseline = static_cast<double>(bytes.value);
        }
        table.rows.push_back({t.name, bytes, static_cast<double>(bytes.value) / baseline});
    }
    // The rows above hold this rank's s/c tokens; the same baseline layer without context parallelism
    // shows what the split saves (c times the bytes).
    if (const std::int64_t c = sc.parallelism.context_parallel_size; c > 1) {
        workload::LayerShape whole = shape;
        whole.seq *= c;
        whole.cp = 1;
        whole.sequence_parallel = false;
        const Bytes bytes = workload::layer_activation_bytes(whole, RecomputeGranularity::None);
        table.rows.push_back({"tensor parallel without context parallel (c=1)", bytes,
                              static_cast<double>(bytes.value) / baseline});
    }
    return table;
}

void write_text(std::ostream& out, const std::vector<ActivationTable>& tables) {
    out << "activation memory per transformer layer, share of the tensor-parallel baseline (Korthikanti "
           "Table 2, "
           "Figure 7)\n";
    for (const ActivationTable& t : tables) {
        out << "  " << t.name << "\n";
        for (const TechniqueRow& r : t.rows) {
            char line[200];
            std::snprintf(line, sizeof line, "    %-44s %10.1f MiB %7.1f %%\n", r.technique.c_str(),
                          static_cast<double>(r.per_layer.value) / 1048576.0, 100.0 * r.share_of_baseline);
            out << line;
        }
    }
}

nlohmann::ordered_json to_json(const std::vector<ActivationTable>& tables) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const ActivationTable& t : tables) {
        nlohmann::ordered_json rows = nlohmann::ordered_json::array();
        for (const TechniqueRow& r : t.rows) {
            rows.push_back({{"technique", r.technique},
                            {"per_layer_bytes", r.per_layer.value},
                            {"share_of_baseline", r.share_of_baseline}});
        }
        out.push_back({{"name", t.name}, {"rows", rows}});
    }
    return out;
}

}  // namespace trainsim::report
