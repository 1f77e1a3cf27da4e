// The one error type for bad user input (scenario, profile, overrides, paths). The CLI prints its
// message as one line to stderr and exits with status 2.
#pragma once

#include <stdexcept>
#include <string>

namespace trainsim {

/// Thrown for input the user can fix. The message names the key and the rule, e.g.
/// "parallelism.tensor_model_parallel_size=6 must divide model.num_attention_heads=64".
class InputError : public std::runtime_error {
public:
    explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace trainsim
