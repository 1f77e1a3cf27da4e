#include "sim/workload/fp32_embedding_gradients.h"

#include "sim/workload/optimizer_state.h"
#include "sim/workload/parameter_count.h"

namespace trainsim::workload {

namespace {
constexpr std::int64_t kFp32GradientBytes = config::bytes_of(config::StateDtype::Fp32);
}  // namespace

bool fp32_embedding_gradients(const config::Scenario& sc) {
    return sc.training.fp32_embedding_grads && gradient_bytes(sc) != kFp32GradientBytes;
}

std::int64_t embedding_gradient_bytes(const config::Scenario& sc) {
    return fp32_embedding_gradients(sc) ? kFp32GradientBytes : gradient_bytes(sc);
}

std::int64_t fp32_input_embedding_parameters(const config::Scenario& sc) {
    return fp32_embedding_gradients(sc)
               ? word_embedding_parameters_per_rank(sc) + position_embedding_parameters(sc)
               : 0;
}

std::int64_t fp32_tied_copy_parameters(const config::Scenario& sc, std::int64_t pipeline_rank) {
    const bool tied_copy =
        !sc.model.untie_embeddings_and_output_weights && output_layer_has_own_weights(sc, pipeline_rank);
    return fp32_embedding_gradients(sc) && tied_copy ? word_embedding_parameters_per_rank(sc) : 0;
}

std::int64_t fp32_gradient_parameters(const config::Scenario& sc, std::int64_t pipeline_rank) {
    return (sc.holds_first_stage(pipeline_rank) ? fp32_input_embedding_parameters(sc) : 0) +
           fp32_tied_copy_parameters(sc, pipeline_rank);
}

std::int64_t fp32_gradient_extra_bytes(const config::Scenario& sc, std::int64_t fp32) {
    return fp32 * (embedding_gradient_bytes(sc) - gradient_bytes(sc));
}

std::int64_t gradient_buffer_bytes(const config::Scenario& sc, std::int64_t parameters, std::int64_t fp32) {
    return parameters * gradient_bytes(sc) + fp32_gradient_extra_bytes(sc, fp32);
}

}  // namespace trainsim::workload
