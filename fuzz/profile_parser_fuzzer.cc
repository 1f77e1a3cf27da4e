// Fuzzes the hardware-profile loader (cost::load_hardware_profile) with arbitrary file contents, then
// prices a spread of ops on every profile it accepts. The loader takes a path, so the input is written
// to a private temporary directory under the name its "name" field asks for (the loader requires the two
// to match, and a fuzzer stuck on that rule would never reach the curves). An accepted profile must give
// finite, non-negative costs for every op; a rejected one, one InputError line.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "fuzz/fuzz_support.h"
#include "sim/core/input_error.h"
#include "sim/cost/cost_model.h"
#include "sim/cost/hardware_profile.h"

namespace {

namespace fs = std::filesystem;
using namespace trainsim;

const fs::path& scratch_dir() {
    static const fs::path dir = [] {
        std::string pattern = (fs::temp_directory_path() / "trainsim-profile-fuzz-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) {
            std::abort();
        }
        return fs::path(pattern);
    }();
    return dir;
}

// The file name the loader will accept for this text: its "name" when that is a plain file name.
std::string file_name_for(const std::string& text) {
    const auto doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_object() && doc.contains("name") && doc["name"].is_string()) {
        const std::string name = doc["name"].get<std::string>();
        const bool plain =
            !name.empty() && name.size() < 100 && name != "." && name != ".." &&
            name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
                std::string::npos &&
            !name.ends_with(".json");
        if (plain) {
            return name;
        }
    }
    return "fuzz";
}

void require_cost(Seconds s, const char* what) {
    fuzz::require(std::isfinite(s.value) && s.value >= 0.0, what);
}

// Prices ops across the sizes the simulator asks for, inside and outside every curve's range.
void price_everything(const cost::CostModel& cost) {
    for (const std::int64_t m : {1LL, 128LL, 8192LL, 1LL << 20}) {
        for (const cost::GemmClass cls :
             {cost::GemmClass::Dense, cost::GemmClass::AttentionScore, cost::GemmClass::AttentionOverValue}) {
            require_cost(cost.gemm({m, 3 * m / 2 + 1, 64, 2}, cls), "gemm cost is finite and >= 0");
        }
    }
    for (const std::int64_t bytes : {0LL, 1LL, 1LL << 20, 1LL << 40}) {
        for (int k = 0; k <= static_cast<int>(cost::MemoryBoundKind::Generic); ++k) {
            require_cost(cost.memory_bound(Bytes{bytes}, static_cast<cost::MemoryBoundKind>(k)),
                         "memory-bound cost is finite and >= 0");
        }
        const int per_node = cost.profile().gpus_per_node;
        for (const cost::CollectiveKind kind :
             {cost::CollectiveKind::AllReduce, cost::CollectiveKind::AllGather,
              cost::CollectiveKind::ReduceScatter}) {
            for (const int n : {1, std::min(2, per_node), per_node}) {
                require_cost(cost.collective(kind, Bytes{bytes}, n, cost::Scope::IntraNode),
                             "intra-node collective cost is finite and >= 0");
            }
            for (const int nodes : {2, 3, 64}) {
                // A whole-node group only where nodes × gpus_per_node fits an int.
                if (per_node <= (1 << 20)) {
                    require_cost(
                        cost.collective(kind, Bytes{bytes}, nodes * per_node, cost::Scope::InterNode, nodes),
                        "inter-node collective cost is finite and >= 0");
                }
                require_cost(
                    cost.collective(kind, Bytes{bytes}, nodes, cost::Scope::InterNode, nodes, per_node),
                    "shared-NIC collective cost is finite and >= 0");
            }
        }
        // Send/recv is always between one pair.
        if (per_node >= 2) {
            require_cost(
                cost.collective(cost::CollectiveKind::SendRecv, Bytes{bytes}, 2, cost::Scope::IntraNode),
                "intra-node send/recv cost is finite and >= 0");
        }
        require_cost(
            cost.collective(cost::CollectiveKind::SendRecv, Bytes{bytes}, 2, cost::Scope::InterNode, 2, 1),
            "inter-node send/recv cost is finite and >= 0");
    }
    for (const cost::Scope scope : {cost::Scope::IntraNode, cost::Scope::InterNode}) {
        const double slowdown = cost.compute_slowdown_while_overlapped(scope);
        fuzz::require(std::isfinite(slowdown) && slowdown >= 1.0, "overlap slowdown is finite and >= 1");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const std::string name = file_name_for(text);
    const fs::path path = scratch_dir() / (name + ".json");
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << text;
    }
    try {
        const cost::CostModel cost(cost::load_hardware_profile(name, scratch_dir().string()));
        price_everything(cost);
    } catch (const InputError& e) {
        fuzz::require_one_line(e.what());
    }
    std::error_code ec;
    fs::remove(path, ec);
    return 0;
}
