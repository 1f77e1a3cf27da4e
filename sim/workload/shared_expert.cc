#include "sim/workload/shared_expert.h"

#include <string>

#include "sim/workload/element_bytes.h"
#include "sim/workload/tensor_parallel_linear.h"

namespace trainsim::workload {
namespace {

using cost::CollectiveKind;
using cost::MemoryBoundKind;

struct SharedSizes {
    std::int64_t sb;        // s·b tokens: fc1 and fc2 run on the gathered sequence
    std::int64_t full;      // s·b·h, the gathered [s, b, h] activation
    std::int64_t E;         // the rank's share of it (s·b·h/t with SP)
    std::int64_t local;     // f_s/t, the rank's width of the expert
    std::int64_t local_in;  // fc1's output width: twice local when gated
};

SharedSizes shared_sizes(const LayerShape& x) {
    SharedSizes z{};
    z.sb = x.tokens();
    z.full = x.tokens() * x.hidden;
    z.E = x.sequence_sharded_elements();
    z.local = x.shared_ffn / x.tp;
    z.local_in = (x.swiglu ? 2 : 1) * z.local;
    return z;
}

std::string shared_expert_activation_name(const LayerShape& x) {
    return x.swiglu ? "shared_expert.swiglu" : "shared_expert.gelu";
}

bool gathers_input(const LayerShape& x) {
    return x.sequence_parallel && x.tp > 1;
}

void activation_forward(OpListBuilder& ops, const LayerShape& x, const SharedSizes& z, Bytes saved) {
    ops.memory(shared_expert_activation_name(x), MemoryBoundKind::BiasGelu,
               z.sb * (z.local_in + z.local) * kActivationBytes, saved);
}

void activation_backward(OpListBuilder& ops, const LayerShape& x, const SharedSizes& z) {
    ops.memory(shared_expert_activation_name(x) + ".bwd", MemoryBoundKind::BiasGelu,
               z.sb * (z.local + 2 * z.local_in) * kActivationBytes);
}

void fc2_backward(OpListBuilder& ops, const LayerShape& x, const SharedSizes& z) {
    ops.gemm("shared_expert.fc2.dgrad", {z.sb, z.local, x.hidden});
    ops.gemm("shared_expert.fc2.wgrad", {z.local, x.hidden, z.sb});
}

}  // namespace

// fc1's input is the pre-MLP norm's output, the tensor the router's GEMM keeps (PyTorch keeps one tensor
// once, whatever reads it), so fc1 keeps nothing of its own but, with `fc1_fp8_copy`, its quantized copy
// (saved_bytes halved by fp8_layer.h): Megatron has TE keep the original input instead except under the
// delayed recipe or inside the shared_experts checkpoint (shared_experts.py, set_save_original_input when
// fp8_recipe != delayed and not recomputed).
void shared_expert_forward(OpListBuilder& ops, const LayerShape& x, bool keep, bool fc1_fp8_copy) {
    const SharedSizes z = shared_sizes(x);
    auto saved = [keep](std::int64_t bytes) { return Bytes{keep ? bytes : 0}; };
    if (gathers_input(x)) {
        ops.sync_collective("shared_expert.fc1.allgather", CollectiveKind::AllGather,
                            z.full * kActivationBytes);
    }
    ops.gemm("shared_expert.fc1", {z.sb, z.local_in, x.hidden},
             Bytes{fc1_fp8_copy ? z.E * kActivationBytes : 0});
    activation_forward(ops, x, z, saved(z.sb * z.local_in * kActivationBytes));
    ops.gemm("shared_expert.fc2", {z.sb, x.hidden, z.local}, saved(z.sb * z.local * kActivationBytes));
    if (x.tp > 1) {
        ops.sync_collective(x.sequence_parallel ? "shared_expert.fc2.reducescatter"
                                                : "shared_expert.fc2.allreduce",
                            x.sequence_parallel ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce,
                            z.full * kActivationBytes);
    }
}

void shared_expert_backward(OpListBuilder& ops, const LayerShape& x) {
    const SharedSizes z = shared_sizes(x);
    if (gathers_input(x)) {
        ops.sync_collective("shared_expert.fc2.grad_allgather", CollectiveKind::AllGather,
                            z.full * kActivationBytes);
    }
    fc2_backward(ops, x, z);
    activation_backward(ops, x, z);
    column_parallel_backward(ops, x, z.sb, x.hidden, z.local_in, "shared_expert.fc1");
}

void shared_expert_output_add(OpListBuilder& ops, const LayerShape& x) {
    // Routed plus shared output: read both, write one.
    ops.memory("moe.shared_add", MemoryBoundKind::Generic,
               3 * x.sequence_sharded_elements() * kActivationBytes);
}

void shared_expert_input_grad_add(OpListBuilder& ops, const LayerShape& x) {
    // The shared expert's input gradient meets the router's and the tokens': read both, write one.
    ops.memory("moe.shared_input_grad_add", MemoryBoundKind::Generic,
               3 * x.sequence_sharded_elements() * kActivationBytes);
}

void OverlappedSharedExpert::issue(OpListBuilder& ops, const char* name, CollectiveKind kind) {
    comm_ = ops.side_collective(name, kind, shared_sizes(x_).full * kActivationBytes);
}

void OverlappedSharedExpert::reduce(OpListBuilder& ops, const char* scatter, const char* all_reduce) {
    if (x_.tp > 1) {
        issue(ops, x_.sequence_parallel ? scatter : all_reduce,
              x_.sequence_parallel ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce);
    }
}

void OverlappedSharedExpert::wait(OpListBuilder& ops) {
    if (comm_ >= 0) {
        ops.join(comm_);
        comm_ = -1;
    }
}

void OverlappedSharedExpert::pre_forward_comm(OpListBuilder& ops) {
    // The gather is Megatron's own, of the BF16 tokens (not TE's FP8 one): the name keeps it out of
    // fp8_layer.h's FP8 gathers.
    if (gathers_input(x_)) {
        issue(ops, "shared_expert.pre_forward_comm.allgather", CollectiveKind::AllGather);
    }
}

void OverlappedSharedExpert::linear_fc1_forward_and_act(OpListBuilder& ops) {
    const SharedSizes z = shared_sizes(x_);
    wait(ops);
    // With SP fc1's input is the gathered copy (cached_fc1_input), which its TE Linear (parallel_mode
    // None: no gather of its own, so no re-gather in the backward) keeps whole: quantized under the
    // delayed recipe (halved by fp8_layer.h), else the original BF16 (set_save_original_input), counted on
    // the activation so that the FP8 rewrite leaves it whole. Without SP it reads the router's input as
    // the serial one does.
    const bool delayed = x_.fp8 == config::Fp8Recipe::Delayed;
    std::int64_t fc1_saved = keep_ && delayed ? z.E * kActivationBytes : 0;
    std::int64_t act_saved = keep_ ? z.sb * z.local_in * kActivationBytes : 0;
    if (gathers_input(x_) && keep_) {
        fc1_saved = !x_.fp8.has_value() || delayed ? z.full * kActivationBytes : 0;
        act_saved += fc1_saved == 0 ? z.full * kActivationBytes : 0;
    }
    ops.gemm("shared_expert.fc1", {z.sb, z.local_in, x_.hidden}, Bytes{fc1_saved});
    activation_forward(ops, x_, z, Bytes{act_saved});
}

void OverlappedSharedExpert::linear_fc2_forward_and_post_comm(OpListBuilder& ops) {
    const SharedSizes z = shared_sizes(x_);
    ops.gemm("shared_expert.fc2", {z.sb, x_.hidden, z.local},
             Bytes{keep_ ? z.sb * z.local * kActivationBytes : 0});
    reduce(ops, "shared_expert.post_forward_comm.reducescatter", "shared_expert.post_forward_comm.allreduce");
}

void OverlappedSharedExpert::get_output(OpListBuilder& ops) {
    wait(ops);
    shared_expert_output_add(ops, x_);
}

void OverlappedSharedExpert::post_forward_comm_backward(OpListBuilder& ops) {
    if (gathers_input(x_)) {
        issue(ops, "shared_expert.post_forward_comm.reducescatter.bwd", CollectiveKind::AllGather);
    }
}

void OverlappedSharedExpert::linear_fc2_backward(OpListBuilder& ops) {
    wait(ops);
    fc2_backward(ops, x_, shared_sizes(x_));
}

void OverlappedSharedExpert::linear_fc1_backward(OpListBuilder& ops) {
    const SharedSizes z = shared_sizes(x_);
    activation_backward(ops, x_, z);
    // fc1's input was gathered in the forward and kept: dgrad and wgrad with no collective of their own.
    ops.gemm("shared_expert.fc1.dgrad", {z.sb, x_.hidden, z.local_in});
    ops.gemm("shared_expert.fc1.wgrad", {z.local_in, x_.hidden, z.sb});
    // The gather's backward reduce-scatters the input gradient (SP); without SP
    // copy_to_tensor_model_parallel_region's all-reduces it.
    reduce(ops, "shared_expert.pre_forward_comm.allgather.bwd", "shared_expert.pre_forward_comm.copy.bwd");
}

void OverlappedSharedExpert::input_grad(OpListBuilder& ops) {
    wait(ops);
    shared_expert_input_grad_add(ops, x_);
}

}  // namespace trainsim::workload
