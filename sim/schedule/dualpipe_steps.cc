#include "sim/schedule/dualpipe_steps.h"

#include <array>
#include <deque>

namespace trainsim::schedule {
namespace {

// Appends passes in the reference's order, numbering each chunk's forwards and backwards in turn.
class StepWriter {
public:
    explicit StepWriter(std::vector<Step>& out) : out_(out) {}

    void forward(std::int32_t chunk, bool paired = false) {
        out_.push_back({Pass::Forward, next_forward_[static_cast<std::size_t>(chunk)]++, chunk, paired});
    }
    // `split`: B alone, its W queued for a later weight(); otherwise B and W fused.
    void backward(std::int32_t chunk, bool split = false) {
        const std::int32_t mb = next_backward_[static_cast<std::size_t>(chunk)]++;
        out_.push_back({Pass::Backward, mb, chunk});
        if (split) {
            weights_.push_back({Pass::Weight, mb, chunk});
        }
    }
    void weight() {
        out_.push_back(weights_.front());
        weights_.pop_front();
    }

private:
    std::vector<Step>& out_;
    std::array<std::int32_t, 2> next_forward_{0, 0};
    std::array<std::int32_t, 2> next_backward_{0, 0};
    std::deque<Step> weights_;  // the W's of split backwards, oldest first (WeightGradStore's FIFO)
};

}  // namespace

std::vector<Step> dualpipe_steps(std::int64_t ranks, std::int64_t microbatches, std::int64_t rank) {
    const std::int64_t p = ranks;
    const std::int64_t m = microbatches;
    const std::int64_t r = rank;
    std::vector<Step> out;
    out.reserve(static_cast<std::size_t>(6 * m));
    StepWriter w(out);
    for (std::int64_t i = 0; i < 2 * (p - r - 1); ++i) {  // 1
        w.forward(0);
    }
    for (std::int64_t i = 0; i < r + 1; ++i) {  // 2
        w.forward(0);
        w.forward(1);
    }
    for (std::int64_t i = 0; i < p - r - 1; ++i) {  // 3
        w.backward(1, /*split=*/true);
        w.weight();
        w.forward(1);
    }
    for (std::int64_t i = 0; i < m - 2 * p + r + 1; ++i) {  // 4
        w.forward(0, /*paired=*/!(i == 0 && r == p - 1));
        w.backward(1);
        w.forward(1, /*paired=*/true);
        w.backward(0);
    }
    for (std::int64_t i = 0; i < p - r - 1; ++i) {  // 5
        w.backward(1);
        w.forward(1, /*paired=*/true);
        w.backward(0);
    }
    bool split = false;
    const std::int64_t step6 = r + 1;
    for (std::int64_t i = 0; i < step6; ++i) {  // 6: the second half split
        split = split || (i == step6 / 2 && r % 2 == 1);
        w.backward(1, split);
        split = split || (i == step6 / 2 && r % 2 == 0);
        w.backward(0, split);
    }
    for (std::int64_t i = 0; i < p - r - 1; ++i) {  // 7
        w.weight();
        w.backward(0, /*split=*/true);
    }
    for (std::int64_t i = 0; i < r + 1; ++i) {  // 8
        w.weight();
    }
    return out;
}

}  // namespace trainsim::schedule
