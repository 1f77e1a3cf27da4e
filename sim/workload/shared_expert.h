// The MoE layer's shared expert (Megatron-Core's SharedExpertMLP, moe/shared_experts.py): a dense MLP of
// width f_s on every token, split over the t ranks like the dense MLP (column-parallel fc1, row-parallel
// fc2; with SP an all-gather before fc1 and a reduce-scatter after fc2), its output added to the routed
// experts'.
//
// Without moe_shared_expert_overlap it runs whole on the compute stream (shared_expert_forward/backward).
// With it, the alltoall dispatcher calls its pieces around its exchanges (token_dispatcher.py,
// MoEAlltoAllTokenDispatcher) on the expert's own CUDA stream, the all-to-alls on NCCL's stream
// (use_nccl_stream): pre_forward_comm before permutation 1, fc1 and its activation right after the
// dispatch all-to-all is issued, fc2 and post_forward_comm right after the combine all-to-all, the
// output joined after the unpermute. Autograd runs each backward op on its forward op's stream, and
// Megatron orders them (set_tensor_grad_fn_sequence_sr, _BackwardStreamWait) so that fc2's backward runs
// beside the combine all-to-all's backward and fc1's beside the dispatch all-to-all's, after the routed
// experts' fc1 backward (OverlappedSharedExpert).
//
// One compute stream carries both streams' kernels, in the order Megatron issues them: the GPU's SMs
// are one resource, so the side stream's GEMMs and the routed ones after them take the same time in
// either order; what changes is that the exchanges no longer wait for the shared expert nor it for them.
// Its collectives run on their own stream (OpStream::SharedExpertComm): NCCL's TP communicator does not
// queue behind the EP one.
#pragma once

#include <cstdint>

#include "sim/workload/layer_shape.h"
#include "sim/workload/op_list_builder.h"

namespace trainsim::workload {

/// The shared expert up to its output (the add into the routed output is the MoE layer's postprocess,
/// outside Megatron's shared_experts checkpoint), run whole. `keep`: its tensors are kept for the
/// backward; `fc1_fp8_copy`: fc1 keeps its quantized input (see shared_expert.cc).
void shared_expert_forward(OpListBuilder& ops, const LayerShape& x, bool keep, bool fc1_fp8_copy);

/// Its backward, whole, from the output gradient to the input gradient (not yet added to the router's).
void shared_expert_backward(OpListBuilder& ops, const LayerShape& x);

/// The shared output added to the routed one (moe.shared_add).
void shared_expert_output_add(OpListBuilder& ops, const LayerShape& x);

/// The shared expert's input gradient added to the router's and the tokens' (moe.shared_input_grad_add).
void shared_expert_input_grad_add(OpListBuilder& ops, const LayerShape& x);

/// The shared expert under moe_shared_expert_overlap, piece by piece; the dispatcher
/// (moe_token_dispatch.h) calls them in Megatron's order, the pieces of one pass on one object.
class OverlappedSharedExpert {
public:
    /// `keep`: the forward keeps its tensors for the backward (false under full recompute).
    OverlappedSharedExpert(const LayerShape& x, bool keep) : x_(x), keep_(keep) {}

    /// Before permutation 1: with SP the all-gather of the tokens (Megatron's
    /// gather_from_sequence_parallel_region in BF16; the linears' own TP communication is disabled).
    void pre_forward_comm(OpListBuilder& ops);
    /// Right after the dispatch all-to-all is issued: fc1 and the activation, beside it.
    void linear_fc1_forward_and_act(OpListBuilder& ops);
    /// Right after the combine all-to-all is issued: fc2 beside it, then the reduce-scatter (SP) or
    /// all-reduce over the t ranks.
    void linear_fc2_forward_and_post_comm(OpListBuilder& ops);
    /// After the unpermute: the compute stream waits for the shared expert's stream and adds its output.
    void get_output(OpListBuilder& ops);

    /// First in the MoE backward: the post-forward reduce-scatter's backward, an all-gather of the output
    /// gradient (SP).
    void post_forward_comm_backward(OpListBuilder& ops);
    /// Right after the combine all-to-all's backward is issued: fc2's dgrad and wgrad beside it.
    void linear_fc2_backward(OpListBuilder& ops);
    /// Right after the dispatch all-to-all's backward is issued (after the routed experts' backward):
    /// the activation's and fc1's backward beside it, then the pre-forward gather's backward.
    void linear_fc1_backward(OpListBuilder& ops);
    /// Last: the compute stream waits for the shared expert's input gradient and adds it.
    void input_grad(OpListBuilder& ops);

private:
    /// A collective of the gathered [s·b, h] activation from the shared expert's stream (comm_).
    void issue(OpListBuilder& ops, const char* name, cost::CollectiveKind kind);
    /// The sum over the t ranks: `scatter` with SP, else `all_reduce`; none at t = 1.
    void reduce(OpListBuilder& ops, const char* scatter, const char* all_reduce);
    /// The next compute op waits for comm_, if any.
    void wait(OpListBuilder& ops);

    const LayerShape& x_;
    bool keep_;
    std::int32_t comm_ = -1;  // the last side-stream collective, joined by the next piece that needs it
};

}  // namespace trainsim::workload
