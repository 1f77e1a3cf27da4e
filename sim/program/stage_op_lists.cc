#include "sim/program/stage_op_lists.h"

#include "sim/workload/fp32_embedding_gradients.h"
#include "sim/workload/fp8_layer.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/stage_ops.h"
#include "sim/workload/tp_replicated_gradients.h"

namespace trainsim::program {

StageOpLists::StageOpLists(const config::Scenario& scenario, OpListStore& store, bool sharded,
                           bool gradients_reduced)
    : sc_(scenario), store_(store), sharded_(sharded), gradients_reduced_(gradients_reduced) {}

const workload::OpList& StageOpLists::gradient_buffer_zeroing(std::int64_t pipeline_rank) {
    auto [it, added] = zeroing_.try_emplace(pipeline_rank, nullptr);
    if (added) {
        // Under FSDP a rank's buffer holds its 1/(d·c) shard of the layers' gradients.
        const workload::StageParameters params = workload::stage_parameters(sc_, pipeline_rank);
        const std::int64_t held = sharded_
                                      ? params.total() - params.transformer +
                                            params.transformer / sc_.parallelism.data_parallel_size_with_cp()
                                      : params.total();
        it->second = own(workload::gradient_buffer_zeroing(
            sc_, held, workload::fp32_gradient_parameters(sc_, pipeline_rank)));
    }
    return *it->second;
}

const workload::OpList& StageOpLists::end_of_iteration(std::int64_t pipeline_rank) {
    auto [it, added] = end_.try_emplace(pipeline_rank, nullptr);
    if (added) {
        const workload::StageParameters params = workload::stage_parameters(sc_, pipeline_rank);
        const bool tied = workload::holds_tied_embedding_copy(sc_, pipeline_rank);
        const std::int64_t embedding = tied ? workload::word_embedding_parameters_per_rank(sc_) : 0;
        std::int64_t tp_replicated = 0;
        if (sc_.training.tp_replicated_grad_allreduce) {
            const workload::TpReplicatedParameters r = workload::tp_replicated_parameters(sc_, pipeline_rank);
            // Under FSDP each rank all-reduces its shards of the layers' gradients (Megatron-FSDP's
            // local tensors): 1/(d·c) of them.
            tp_replicated = r.final_norm +
                            (sharded_ ? r.layers / sc_.parallelism.data_parallel_size_with_cp() : r.layers);
        }
        workload::OpList ops = workload::end_of_iteration(
            sc_, params.total(), embedding, gradients_reduced_, sharded_ ? params.transformer : 0,
            params.expert, tp_replicated, workload::fp32_gradient_parameters(sc_, pipeline_rank));
        if (const auto fp8 = sc_.training.fp8()) {
            // TE casts the updated weights to FP8 once, on the next iteration's first micro-batch,
            // after the distributed optimizer's parameter all-gather when there is one.
            const auto last = static_cast<std::int32_t>(ops.size()) - 1;
            const bool wait_last = last >= 0 && ops.back().blocking;
            for (workload::Op& op :
                 workload::fp8_weight_casts(workload::fp8_weight_parameters(sc_, pipeline_rank), *fp8)) {
                if (wait_last) {
                    op.after.push_back(last);
                }
                ops.push_back(std::move(op));
            }
        }
        it->second = own(std::move(ops));
    }
    return *it->second;
}

const workload::OpList* StageOpLists::own(workload::OpList ops) {
    store_.push_back(std::make_unique<workload::OpList>(std::move(ops)));
    return store_.back().get();
}

}  // namespace trainsim::program
