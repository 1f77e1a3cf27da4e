#include "calibrate/cli/cli_support.h"

#include <cstdlib>

#include "calibrate/measure/measurement.h"
#include "sim/core/input_error.h"
#include "sim/report/atomic_file.h"

namespace trainsim::calibrate::cli {

std::string profile_directory() {
    if (const char* dir = std::getenv("TRAINSIM_DATA_DIR"); dir != nullptr && *dir != '\0') {
        return std::string(dir) + "/hardware";
    }
    return std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/hardware";
}

std::string profile_path(const std::string& name_or_path) {
    const bool bare =
        name_or_path.find('/') == std::string::npos &&
        !(name_or_path.size() >= 5 && name_or_path.compare(name_or_path.size() - 5, 5, ".json") == 0);
    return bare ? profile_directory() + "/" + name_or_path + ".json" : name_or_path;
}

config::Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
    return config::load_scenario(path, config::parse_overrides(overrides));
}

NcclLogOptions nccl_options(const std::string& op, int ranks, int nodes) {
    NcclLogOptions o;
    if (!op.empty()) {
        o.op = collective_kind_from(op);
        if (!o.op) {
            throw InputError("--op=" + op +
                             " must be one of all_reduce, all_gather, reduce_scatter, send_recv");
        }
    }
    if (ranks != 0) {
        if (ranks < 2) {
            throw InputError("--ranks=" + std::to_string(ranks) + " must be at least 2");
        }
        o.ranks = ranks;
    }
    if (nodes != 0) {
        if (nodes < 1) {
            throw InputError("--nodes=" + std::to_string(nodes) + " must be at least 1");
        }
        o.nodes = nodes;
    }
    return o;
}

void write_text_file(const std::string& path, const std::string& option, const std::string& text) {
    report::write_file_atomically(path, option, [&](std::ostream& out) { out << text; });
}

}  // namespace trainsim::calibrate::cli
