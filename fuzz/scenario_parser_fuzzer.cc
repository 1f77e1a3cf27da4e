// Fuzzes the scenario parser (config::parse_scenario) with arbitrary text. The input is the scenario
// file; anything after a NUL byte is a list of `--set key=value` overrides, one per further NUL, so
// that overrides go through the same parser. Every input must give a Scenario that passes its own
// validation again, or one InputError line; any other exception, crash or sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "sim/config/scenario.h"
#include "sim/core/input_error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace trainsim;
    const std::string input(reinterpret_cast<const char*>(data), size);
    const std::size_t nul = input.find('\0');
    const std::string text = input.substr(0, nul);
    std::vector<config::Override> overrides;
    try {
        for (std::size_t start = nul; start != std::string::npos && start < input.size();) {
            const std::size_t next = input.find('\0', start + 1);
            overrides.push_back(config::parse_override(input.substr(start + 1, next - start - 1)));
            start = next;
        }
        const config::Scenario sc = config::parse_scenario(text, "fuzz.json", overrides);
        // A parsed scenario is valid: validating it again must pass, and the derived counts the
        // simulator divides by and loops over must be positive.
        config::validate_scenario(sc);
        fuzz::require(sc.num_gpus() >= 1, "num_gpus() >= 1");
        fuzz::require(sc.num_microbatches() >= 1, "num_microbatches() >= 1");
        fuzz::require(!sc.name.empty(), "name is not empty");
    } catch (const InputError& e) {
        fuzz::require_one_line(e.what());
    }
    return 0;
}
