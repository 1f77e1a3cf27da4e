#include "sim/program/parameter_gather.h"

#include <memory>
#include <utility>

#include "sim/workload/stage_ops.h"

namespace trainsim::program {

ParameterGather::ParameterGather(const config::Scenario& scenario, OpListStore& store, std::int64_t chunks)
    : on_(scenario.training.overlap_param_gather && scenario.parallelism.data_parallel_size_with_cp() > 1),
      bucket_parameters_(workload::gradient_bucket_parameters(scenario)), store_(&store),
      chunks_(static_cast<std::size_t>(chunks)) {}

std::vector<std::int32_t> ParameterGather::buckets(const std::vector<std::int64_t>& unit_parameters,
                                                   std::int64_t bucket_parameters,
                                                   std::vector<std::int64_t>& bucket_sizes) {
    // Filled in backward order as BackwardLowering fills the gradient buckets: a bucket closes once it
    // holds bucket_parameters; the last may hold less.
    std::vector<std::int32_t> reversed(unit_parameters.size(), -1);
    std::vector<std::int64_t> sizes;
    std::int64_t filled = 0;
    for (std::size_t k = unit_parameters.size(); k-- > 0;) {
        if (unit_parameters[k] == 0) {
            continue;
        }
        reversed[k] = static_cast<std::int32_t>(sizes.size());
        filled += unit_parameters[k];
        if (filled >= bucket_parameters) {
            sizes.push_back(filled);
            filled = 0;
        }
    }
    if (filled > 0) {
        sizes.push_back(filled);
    }
    // Gathered the other way round: the bucket holding the first units goes first.
    const auto n = static_cast<std::int32_t>(sizes.size());
    for (std::int32_t& b : reversed) {
        b = b < 0 ? -1 : n - 1 - b;
    }
    bucket_sizes.assign(sizes.rbegin(), sizes.rend());
    return reversed;
}

void ParameterGather::begin_gpu() {
    for (Chunk& c : chunks_) {
        c = Chunk{};
    }
    current_ = -1;
}

void ParameterGather::prepare(std::int32_t chunk, const std::vector<std::int64_t>& unit_parameters) {
    Chunk& c = chunks_[static_cast<std::size_t>(chunk)];
    if (!on_ || c.prepared) {
        return;
    }
    c.bucket_of = buckets(unit_parameters, bucket_parameters_, c.bucket_sizes);
    c.issued.assign(c.bucket_sizes.size(), engine::kNoTask);
    c.prepared = true;
}

bool ParameterGather::prepared(std::int32_t chunk) const {
    return chunks_[static_cast<std::size_t>(chunk)].prepared;
}

void ParameterGather::dispatch(OpLowering& low, std::int32_t chunk, const StepContext& ctx) {
    Chunk& c = chunks_[static_cast<std::size_t>(chunk)];
    for (std::size_t b = 0; b < c.issued.size(); ++b) {
        issue(low, c, static_cast<std::int32_t>(b), ctx);
    }
}

void ParameterGather::begin_chunk(std::int32_t chunk) {
    if (on_ && chunks_[static_cast<std::size_t>(chunk)].prepared) {
        current_ = chunk;
    }
}

void ParameterGather::issue(OpLowering& low, Chunk& chunk, std::int32_t bucket, const StepContext& ctx) {
    const auto b = static_cast<std::size_t>(bucket);
    if (chunk.issued[b].valid()) {
        return;
    }
    const std::int64_t parameters = chunk.bucket_sizes[b];
    auto [it, added] = ops_.try_emplace(parameters, nullptr);
    if (added) {
        store_->push_back(std::make_unique<workload::OpList>(workload::parameter_bucket_gather(parameters)));
        it->second = store_->back().get();
    }
    StepContext at = ctx;
    at.layer = -1;
    low.lower(*it->second, at);
    chunk.issued[b] = low.last_data_collective();
}

void ParameterGather::before(OpLowering& low, std::size_t unit, const StepContext& ctx) {
    if (current_ < 0) {
        return;
    }
    Chunk& c = chunks_[static_cast<std::size_t>(current_)];
    if (unit >= c.bucket_of.size()) {
        return;
    }
    const std::int32_t bucket = c.bucket_of[unit];
    if (bucket <= c.waited) {
        return;  // no parameters, or its bucket is already here
    }
    issue(low, c, bucket, ctx);
    // The next bucket is issued before the wait is recorded (as FsdpLowering prefetches): on the
    // data-parallel stream it queues behind this one either way, and lowering a list must not take the
    // wait meant for the next compute op.
    if (static_cast<std::size_t>(bucket) + 1 < c.issued.size()) {
        issue(low, c, bucket + 1, ctx);
    }
    low.wait_for(c.issued[static_cast<std::size_t>(bucket)]);
    c.waited = bucket;
}

}  // namespace trainsim::program
