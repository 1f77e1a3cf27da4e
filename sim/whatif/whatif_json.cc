#include "sim/whatif/whatif_json.h"

#include "sim/report/report_json.h"

namespace trainsim::whatif {

nlohmann::ordered_json to_json(const WhatIf& w) {
    nlohmann::ordered_json j;
    j["baseline"] = report::to_json(w.baseline);
    j["critical_path"] = report::to_json(w.critical_path);
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const Sensitivity& s : w.rows) {
        nlohmann::ordered_json r;
        r["knob"] = s.knob;
        r["variation"] = s.label;
        r["kind"] = s.profile ? "profile" : "layout";
        if (!s.error.empty()) {
            r["error"] = s.error;
        } else {
            r["iteration_time_s"] = s.iteration_time.value;
            r["change"] = s.change;
            r["num_gpus"] = s.num_gpus;
            r["gpu_time_change"] = s.gpu_time_change;
            r["peak_memory_bytes"] = s.peak_memory.value;
            r["peak_memory_change_bytes"] = s.peak_change.value;
            r["peak_stage"] = s.peak_stage;
            r["fits_in_memory"] = s.fits_in_memory;
        }
        rows.push_back(r);
    }
    j["sensitivities"] = rows;
    return j;
}

}  // namespace trainsim::whatif
