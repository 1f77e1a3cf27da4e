// The bytes an elementwise aten op moves, where its recorded Input Dims and Input type make them
// derivable: a binary op on two tensors of one shape reads two and writes one (BabelStream's add), an op
// of a tensor and a scalar reads one and writes one (BabelStream's mul), a copy reads one and writes one.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "calibrate/import/kineto_trace.h"

namespace trainsim::kineto {

enum class StreamPattern : std::uint8_t { Copy, Scale, Add };

struct ElementwiseCall {
    StreamPattern pattern = StreamPattern::Copy;
    std::int64_t bytes_moved = 0;  // read plus written
};

/// aten::add, add_, mul, mul_ (two tensors of one shape, or a tensor and a Scalar) and aten::copy_ (two
/// tensors of one element count). Empty for another op, broadcasting, or a type of unknown size.
[[nodiscard]] std::optional<ElementwiseCall> elementwise_call(const Trace& trace, const CpuOp& op);

/// Bytes per element of a PyTorch "Input type" ("float", "c10::BFloat16", "long int", ...); 0 if unknown.
[[nodiscard]] int torch_element_bytes(std::string_view type);

}  // namespace trainsim::kineto
