#include "calibrate/import/kineto_elementwise_call.h"

#include <string>
#include <vector>

namespace trainsim::kineto {

namespace {

// The element count of a shape; empty for a 0-dim (scalar) tensor, a negative size or an overflow.
std::optional<std::int64_t> numel(const std::vector<std::int64_t>& dims) {
    if (dims.empty()) {
        return std::nullopt;
    }
    std::int64_t n = 1;
    for (const std::int64_t d : dims) {
        if (d < 0 || __builtin_mul_overflow(n, d, &n)) {
            return std::nullopt;
        }
    }
    return n;
}

std::optional<std::int64_t> times(std::int64_t a, std::int64_t b) {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) {
        return std::nullopt;
    }
    return r;
}

}  // namespace

int torch_element_bytes(std::string_view type) {
    const std::string t(type);
    if (t == "double" || t == "long int" || t == "long" || t == "c10::complex<float>") {
        return 8;
    }
    if (t == "float" || t == "int") {
        return 4;
    }
    if (t == "c10::BFloat16" || t == "c10::Half" || t == "short int" || t == "short") {
        return 2;
    }
    if (t == "bool" || t == "unsigned char" || t == "signed char" || t.rfind("c10::Float8", 0) == 0) {
        return 1;
    }
    return 0;
}

std::optional<ElementwiseCall> elementwise_call(const Trace& trace, const CpuOp& op) {
    const std::string& name = trace.name(op.name);
    const bool arithmetic =
        name == "aten::add" || name == "aten::add_" || name == "aten::mul" || name == "aten::mul_";
    const bool copy = name == "aten::copy_";
    if ((!arithmetic && !copy) || op.input_dims.size() < 2 || op.input_types.size() < 2) {
        return std::nullopt;
    }
    const int a_bytes = torch_element_bytes(op.input_types[0]);
    const std::optional<std::int64_t> n = numel(op.input_dims[0]);
    if (a_bytes == 0 || !n || *n == 0) {
        return std::nullopt;
    }
    if (copy) {
        const int b_bytes = torch_element_bytes(op.input_types[1]);
        if (b_bytes == 0 || numel(op.input_dims[1]) != n) {
            return std::nullopt;
        }
        const auto bytes = times(*n, a_bytes + b_bytes);
        return bytes ? std::optional(ElementwiseCall{StreamPattern::Copy, *bytes}) : std::nullopt;
    }
    // A Python number: "Scalar" in older traces; PyTorch 2.11 records its type ("double", "long int",
    // "bool") with no dims (add_(1.0) in tests/data/kineto/h200-torch2.11-gemms.pt.trace.json.gz).
    const std::string& second = op.input_types[1];
    if (second == "Scalar" ||
        (op.input_dims[1].empty() && (second == "double" || second == "long int" || second == "bool"))) {
        const auto bytes = times(*n, 2 * a_bytes);
        return bytes ? std::optional(ElementwiseCall{StreamPattern::Scale, *bytes}) : std::nullopt;
    }
    if (op.input_dims[1] != op.input_dims[0] || op.input_types[1] != op.input_types[0]) {
        return std::nullopt;  // broadcasting or type promotion: the bytes depend on the output's shape
    }
    const auto bytes = times(*n, 3 * a_bytes);
    return bytes ? std::optional(ElementwiseCall{StreamPattern::Add, *bytes}) : std::nullopt;
}

}  // namespace trainsim::kineto
