#include "sim/workload/moe_token_dispatch.h"

#include <algorithm>
#include <vector>

#include "sim/workload/element_bytes.h"

namespace trainsim::workload {
namespace {

using config::MoeTokenDispatcher;
using cost::CollectiveKind;
using cost::MemoryBoundKind;

constexpr std::int64_t kCount = 8;  // tokens per expert: routing_map.sum(dim=0).long(), int64

bool all_to_all(const LayerShape& x) {
    return x.moe_dispatcher == MoeTokenDispatcher::AllToAll;
}

// The dispatchers exchange tokens only when the experts are split: Megatron's gather when "tp_size > 1
// or ep_size > 1" over the tp_ep group, its tp being the expert tensor-parallel size.
bool exchanges(const LayerShape& x) {
    return x.etp * x.ep > 1;
}

// The alltoall dispatcher's exchanges over the expert groups: synchronous (the compute stream waits for
// each), or with the shared expert beside them on NCCL's stream, joined by the routed op after them.
class Exchanges {
public:
    Exchanges(OpListBuilder& ops, const OverlappedSharedExpert* shared) : ops_(ops), overlapped_(shared) {}

    std::int32_t issue(const char* name, CollectiveKind kind, std::int64_t bytes, CommGroup group) {
        if (!overlapped_) {
            return ops_.sync_collective(name, kind, bytes, group);
        }
        const std::int32_t index = ops_.async_collective(name, kind, bytes, group);
        if (input_ >= 0) {
            ops_.set_input(index, input_);
        }
        issued_.push_back(index);
        return index;
    }
    /// Every exchange issued from now on reads op `producer`'s output, whatever compute is issued
    /// between them: the shared expert's fc1 runs on its own stream (shared_experts.py
    /// linear_fc1_forward_and_act, `with torch.cuda.stream(self.stream)`), and the probs' all-to-all and
    /// dispatch_postprocess's gathers on the main stream read the permute's and the tokens' outputs.
    void read_from(std::int32_t producer) { input_ = producer; }
    /// The next compute op waits for every exchange issued so far.
    void join_all() {
        for (const std::int32_t index : issued_) {
            ops_.join(index);
        }
        issued_.clear();
    }

private:
    OpListBuilder& ops_;
    bool overlapped_;
    std::vector<std::int32_t> issued_;
    std::int32_t input_ = -1;
};

// The all-to-all over the EP group: S is the busiest rank's received routed tokens of h elements
// (nccl-tests' alltoall S; R for every rank with balanced routing): it ends when that rank has received
// them. Returns its index, or -1 when there is none (Megatron's all_to_all returns its input on one rank).
std::int32_t expert_all_to_all(Exchanges& ex, const LayerShape& x, const MoeSizes& z, const char* name) {
    if (x.ep == 1) {
        return -1;
    }
    return ex.issue(name, CollectiveKind::AllToAll, z.received * z.h * kActivationBytes, CommGroup::Expert);
}

// token_dispatch's second all-to-all: each routed token's prob ([received] in the probs' dtype) follows its
// token to the expert's rank (token_dispatcher.py: "tokens A2A -> shared experts fc1 -> probs A2A"; the
// backward sends the probs' gradients back first). Latency-bound: a few KB. Returns its index, or -1.
std::int32_t probs_all_to_all(Exchanges& ex, const LayerShape& x, const MoeSizes& z, const char* name) {
    if (x.ep == 1) {
        return -1;
    }
    return ex.issue(name, CollectiveKind::AllToAll, z.received * kProbBytes, CommGroup::Expert);
}

// MoEAlltoAllTokenDispatcher under expert TP: dispatch_postprocess all-gathers the received tokens and
// their permuted probs ([received] in the probs' dtype) over the expert-TP group, so each rank runs its
// slice of the local experts on all R_max = etp·received copies (gather_from_sequence_parallel_region
// with output_splits_tp; nccl-tests' S: the gathered array). Returns the first one's index, or -1.
std::int32_t expert_tensor_gather(Exchanges& ex, const LayerShape& x, const MoeSizes& z) {
    if (x.etp == 1) {
        return -1;
    }
    const std::int32_t first = ex.issue("moe.dispatch.etp_allgather", CollectiveKind::AllGather,
                                        z.R_max * z.h * kActivationBytes, CommGroup::ExpertTensor);
    ex.issue("moe.dispatch.etp_probs_allgather", CollectiveKind::AllGather, z.R_max * kProbBytes,
             CommGroup::ExpertTensor);
    return first;
}

// Distinct gathered rows the allgather dispatcher's permute reads (and its backward's gather of the
// output gradient): every token at most once, and no more than the copies it makes.
std::int64_t gathered_rows_read(const MoeSizes& z) {
    return std::min(z.gathered, z.R_max);
}

}  // namespace

std::int32_t moe_dispatch_forward(OpListBuilder& ops, const LayerShape& x, const MoeSizes& z, bool keep,
                                  OverlappedSharedExpert* shared) {
    const auto saved = [keep](std::int64_t bytes) { return Bytes{keep ? bytes : 0}; };
    if (all_to_all(x)) {
        Exchanges ex(ops, shared);
        // MoEAlltoAllTokenDispatcher.preprocess: with EP or expert TP the ranks exchange their tokens per
        // expert (gather_from_sequence_parallel_region over tp_ep of [num_experts] int64) for the splits.
        if (exchanges(x)) {
            ops.sync_collective(std::string(kTokensPerExpertGather), CollectiveKind::AllGather,
                                x.etp * x.ep * z.n * kCount, CommGroup::ExpertTensorAndModel);
        }
        // The splits' device-to-host copy is queued before permutation 1 (cuda_dtoh_point): it waits for
        // the GPU's work so far, and the CPU reads it at the dispatcher's cuda_sync_point.
        const std::int32_t dtoh = ops.next_index() - 1;
        if (shared != nullptr) {
            shared->pre_forward_comm(ops);  // dispatch_preprocess, before permutation 1
        }
        // Permute: each token copied to its k experts' slots, grouped by expert (read T·h, write R·h).
        // TE's fused permute (moe_permute_fusion; permutation.py _moe_permute_mask_map) keeps its
        // row_id_map, [T, 2E+1] int32 (triton/permutation.py make_row_id_map), which the unpermute
        // reuses; the permuted tokens themselves are kept by experts.fc1.
        const std::int32_t permute =
            ops.memory("moe.permute", MemoryBoundKind::Generic, (z.T + z.R) * z.h * kActivationBytes,
                       saved(z.T * (2 * z.n + 1) * kRowIdBytes));
        ex.read_from(permute);
        const std::int32_t dispatch = expert_all_to_all(ex, x, z, "moe.dispatch.alltoall");
        if (shared != nullptr) {
            // token_dispatch: fc1 right after the tokens' all-to-all is issued, before the probs'.
            shared->linear_fc1_forward_and_act(ops);
        }
        probs_all_to_all(ex, x, z, "moe.dispatch.probs_alltoall");
        const std::int32_t gather = expert_tensor_gather(ex, x, z);  // dispatch_postprocess
        if (shared != nullptr) {
            ex.join_all();  // the experts wait for the exchanges
        }
        if (x.pad_to_capacity) {
            return -1;  // drop_and_pad: every split is the capacity, known on the host; no sync
        }
        if (x.capacity_factor > 0.0) {
            ops.set_host_wait(permute, dtoh);  // dropping: num_out_tokens, "before_permutation_1"
            return -1;
        }
        if (exchanges(x)) {
            // Input/output splits, "before_ep_alltoall": the CPU waits before its next op after the
            // permute (the all-to-all, or at ep 1 the expert-TP gather).
            ops.set_host_wait(dispatch >= 0 ? dispatch : gather, dtoh);
            return -1;
        }
        return dtoh;  // no exchange: tokens_per_expert, "before_permutation_2" or "before_finish"
    }
    if (exchanges(x)) {
        // gather_from_sequence_parallel_region over tp_ep, in token_dispatch's order: the routing map
        // and the probs [T, E] → [G, E], then the hidden states [T, h] → [G, h] (nccl-tests' S: the
        // gathered array).
        ops.sync_collective("moe.dispatch.routing_map_allgather", CollectiveKind::AllGather,
                            z.gathered * z.n * kRouteBytes, CommGroup::ExpertTensorAndModel);
        ops.sync_collective("moe.dispatch.probs_allgather", CollectiveKind::AllGather,
                            z.gathered * z.n * kProbBytes, CommGroup::ExpertTensorAndModel);
        ops.sync_collective("moe.dispatch.allgather", CollectiveKind::AllGather,
                            z.gathered * z.h * kActivationBytes, CommGroup::ExpertTensorAndModel);
    }
    // dispatch_postprocess reads tokens_per_expert = local_map.sum(0).long().cpu(): the CPU waits for
    // the GPU's work so far before it issues the permute.
    const std::int32_t dtoh = ops.next_index() - 1;
    // Permute by the local experts' columns of the map: read the gathered rows routed here, write the
    // R_max copies grouped by expert. It keeps TE's row_id_map over the G gathered rows and L local
    // experts ([G, 2L+1] int32), and dispatch_postprocess's masked_select of the local probs keeps its
    // input and mask ([L, G] probs and bools: G·L = T·E elements).
    const std::int64_t local_experts = z.gathered * z.L;
    const std::int32_t permute = ops.memory(
        "moe.permute", MemoryBoundKind::Generic, (gathered_rows_read(z) + z.R_max) * z.h * kActivationBytes,
        saved(z.gathered * (2 * z.L + 1) * kRowIdBytes + local_experts * (kProbBytes + kRouteBytes)));
    ops.set_host_wait(permute, dtoh);
    return -1;
}

// The unpermute keeps no expert outputs: Megatron-Core weights them by the probabilities in the experts'
// activation (experts.py bias_act_func, its permuted_probs), and both dispatchers call unpermute without
// probs (token_dispatcher.py combine_postprocess / combine_preprocess), so TE's unpermute saves only the
// permute's row_id_map (permutation.py _moe_unpermute_mask_map, merging_probs None).
void moe_combine_forward(OpListBuilder& ops, const LayerShape& x, const MoeSizes& z,
                         OverlappedSharedExpert* shared) {
    if (all_to_all(x)) {
        if (x.etp > 1) {
            // combine_preprocess: reduce-scatter the experts' partial outputs (fc2 is row-parallel) over
            // the expert-TP group, in the probs' dtype: [R_max, h] → [received, h]. The shared expert's
            // stream waits for it (token_combine's wait_current_stream).
            ops.sync_collective("moe.combine.etp_reducescatter", CollectiveKind::ReduceScatter,
                                z.R_max * z.h * kProbBytes, CommGroup::ExpertTensor);
        }
        Exchanges ex(ops, shared);
        expert_all_to_all(ex, x, z, "moe.combine.alltoall");
        if (shared != nullptr) {
            shared->linear_fc2_forward_and_post_comm(ops);  // token_combine, after the all-to-all
            ex.join_all();
        }
        // Unpermute: the k weighted expert outputs of each token summed (read R·h, write T·h).
        ops.memory("moe.unpermute", MemoryBoundKind::Generic, (z.R + z.T) * z.h * kActivationBytes);
        return;
    }
    // Unpermute into the gathered shape (restore_shape = [G, h]): read the R_max local outputs, write G
    // rows.
    ops.memory("moe.unpermute", MemoryBoundKind::Generic, (z.R_max + z.gathered) * z.h * kActivationBytes);
    if (exchanges(x)) {
        // reduce_scatter_to_sequence_parallel_region over tp_ep, in the probs' dtype: [G, h] → [T, h],
        // summing each token's outputs from the ranks of its k experts.
        ops.sync_collective("moe.combine.reducescatter", CollectiveKind::ReduceScatter,
                            z.gathered * z.h * kProbBytes, CommGroup::ExpertTensorAndModel);
    }
}

void moe_combine_backward(OpListBuilder& ops, const LayerShape& x, const MoeSizes& z,
                          OverlappedSharedExpert* shared) {
    if (all_to_all(x)) {
        Exchanges ex(ops, shared);
        if (shared != nullptr) {
            // The shared output's reduce-scatter node is first (its sequence number is INT_MAX).
            shared->post_forward_comm_backward(ops);
        }
        // Copy each token's output gradient to its k rows: read T·h, write R·h. Nothing else: Megatron-Core
        // weights the rows by the probabilities inside the experts' activation, so the unpermute has no
        // probs and its backward no gradient of them to form from the kept outputs.
        ops.memory("moe.unpermute.bwd", MemoryBoundKind::Generic, (z.T + z.R) * z.h * kActivationBytes);
        expert_all_to_all(ex, x, z, "moe.combine.alltoall.bwd");
        if (x.etp > 1) {
            // The reduce-scatter's backward: all-gather the output gradient over the expert-TP group.
            ex.issue("moe.combine.etp_reducescatter.bwd", CollectiveKind::AllGather,
                     z.R_max * z.h * kProbBytes, CommGroup::ExpertTensor);
        }
        if (shared != nullptr) {
            // The combine all-to-all's output was given sequence number INT_MAX (linear_fc2_forward): its
            // backward is issued first, fc2's backward beside it on the shared expert's stream.
            shared->linear_fc2_backward(ops);
            ex.join_all();
        }
        return;
    }
    if (exchanges(x)) {
        // The reduce-scatter's backward: all-gather the output gradient [T, h] → [G, h].
        ops.sync_collective("moe.combine.reducescatter.bwd", CollectiveKind::AllGather,
                            z.gathered * z.h * kActivationBytes, CommGroup::ExpertTensorAndModel);
    }
    // Gather the gradient rows of the local copies, write their gradient (as above, no probs).
    ops.memory("moe.unpermute.bwd", MemoryBoundKind::Generic,
               (gathered_rows_read(z) + z.R_max) * z.h * kActivationBytes);
}

void moe_dispatch_backward(OpListBuilder& ops, const LayerShape& x, const MoeSizes& z,
                           OverlappedSharedExpert* shared) {
    if (all_to_all(x)) {
        Exchanges ex(ops, shared);
        if (x.etp > 1) {
            // The expert-TP gathers' backward: reduce-scatter the tokens' and the probs' gradients.
            ops.sync_collective("moe.dispatch.etp_allgather.bwd", CollectiveKind::ReduceScatter,
                                z.R_max * z.h * kActivationBytes, CommGroup::ExpertTensor);
            ops.sync_collective("moe.dispatch.etp_probs_allgather.bwd", CollectiveKind::ReduceScatter,
                                z.R_max * kProbBytes, CommGroup::ExpertTensor);
        }
        probs_all_to_all(ex, x, z, "moe.dispatch.probs_alltoall.bwd");
        expert_all_to_all(ex, x, z, "moe.dispatch.alltoall.bwd");
        if (shared != nullptr) {
            // "Backward launch order: probs A2A -> tokens A2A -> shared experts fc1": fc1's backward after
            // the routed experts' (_BackwardStreamWait), beside the tokens' all-to-all.
            shared->linear_fc1_backward(ops);
            ex.join_all();
        }
        // Sum each token's k gradient copies back (read R·h, write T·h).
        ops.memory("moe.permute.bwd", MemoryBoundKind::Generic, (z.R + z.T) * z.h * kActivationBytes);
        return;
    }
    // Scatter-add the R_max copies' gradients into the G gathered rows.
    ops.memory("moe.permute.bwd", MemoryBoundKind::Generic, (z.R_max + z.gathered) * z.h * kActivationBytes);
    if (exchanges(x)) {
        // The all-gathers' backward: reduce-scatter the hidden states' and the probs' gradients
        // [G, ·] → [T, ·] (the routing map has none).
        ops.sync_collective("moe.dispatch.allgather.bwd", CollectiveKind::ReduceScatter,
                            z.gathered * z.h * kActivationBytes, CommGroup::ExpertTensorAndModel);
        ops.sync_collective("moe.dispatch.probs_allgather.bwd", CollectiveKind::ReduceScatter,
                            z.gathered * z.n * kProbBytes, CommGroup::ExpertTensorAndModel);
    }
}

}  // namespace trainsim::workload
