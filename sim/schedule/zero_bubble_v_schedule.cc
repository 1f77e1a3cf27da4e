#include "sim/schedule/zero_bubble_v_schedule.h"

#include <algorithm>
#include <array>
#include <deque>
#include <optional>
#include <string>

#include "sim/core/input_error.h"

namespace trainsim::schedule {
namespace {

// The paper's ZB-V setting: T_F = T_B = T_W (one unit), free communication (Qi et al. 2024, §3).
constexpr std::array<std::int64_t, 3> kCost{1, 1, 1};  // F, B, W
constexpr std::int64_t kComm = 0;
// Activation change per chunk pass, the reference launcher's 34h + 5as (F), −32h (W) and the rest (B)
// for h = 4096, a = 8, s = 4096, divided by 4096.
constexpr std::array<std::int64_t, 3> kMem{74, -42, -32};

struct Unorderable {};  // the reference's greedy hits one of its assertions

struct Trial {
    std::vector<std::vector<Step>> order;
    std::vector<std::int64_t> bubble;
    std::int64_t max_bubble = 0;
};

// One greedy pass of the reference's V scheduler. `approved`: per-rank bubbles of an earlier pass
// (empty on the first), which lets a rank take as much bubble as the worst rank already has.
// The greedy numbers backward chunks in backward order (its B chunk 0 runs down the ranks from rank 0,
// i.e. holds stages p..2p − 1, placement chunk 1), so B and W steps flip the chunk on output.
class Greedy {
public:
    Greedy(std::int64_t p, std::int64_t m, bool fill_f, bool fill_b, std::vector<std::int64_t> approved)
        : p_(p), m_(m), fill_f_(fill_f), fill_b_(fill_b), approved_(std::move(approved)),
          max_mem_(kMem[0] * 2 * p), count_(static_cast<std::size_t>(p)),
          end_(static_cast<std::size_t>(6 * p * m), -1), cur_(static_cast<std::size_t>(p), 0),
          mem_(static_cast<std::size_t>(p), 0), bubble_(static_cast<std::size_t>(p), 0),
          pending_(static_cast<std::size_t>(p)), order_(static_cast<std::size_t>(p)) {
        if (approved_.empty()) {
            approved_.assign(static_cast<std::size_t>(p), -1);
        }
        max_approved_ = *std::max_element(approved_.begin(), approved_.end());
    }

    [[nodiscard]] Trial run() {
        warm_up();
        for (std::int64_t it = 0; it < 2 * m_; ++it) {
            put_backwards();
            put_forwards();
        }
        for (std::int64_t i = 0; i < p_; ++i) {
            while (!pending(i).empty()) {
                put_w(i);
            }
        }
        return {order_, bubble_, max_bubble(-1)};
    }

private:
    [[nodiscard]] std::size_t id(int cat, int chunk, std::int64_t stage, std::int64_t micro) const {
        return static_cast<std::size_t>(cat * 2 * p_ * m_ + chunk * p_ * m_ + stage * m_ + micro);
    }
    // The reference reads end_time[-1] (the last node) where there is no predecessor; kept for its order.
    [[nodiscard]] std::int64_t end_or_last(std::optional<std::size_t> node) const {
        return node ? end_[*node] : end_.back();
    }
    std::int64_t& cnt(std::int64_t stage, int cat, int chunk) {
        return count_[static_cast<std::size_t>(stage)][static_cast<std::size_t>(cat * 2 + chunk)];
    }
    std::int64_t& cur(std::int64_t i) { return cur_[static_cast<std::size_t>(i)]; }
    std::deque<int>& pending(std::int64_t i) { return pending_[static_cast<std::size_t>(i)]; }

    [[nodiscard]] std::int64_t max_bubble(std::int64_t stage) const {
        std::int64_t worst = *std::max_element(bubble_.begin(), bubble_.end());
        worst = std::max<std::int64_t>(worst, 0);
        if (stage >= 0) {
            worst = std::max(worst, max_approved_ - approved_[static_cast<std::size_t>(stage)]);
        }
        return worst;
    }
    static void require(bool ok) {
        if (!ok) {
            throw Unorderable{};
        }
    }

    void put(int cat, int chunk, std::int64_t stage) {
        const std::int64_t no_bubble = cur(stage) + kCost[static_cast<std::size_t>(cat)];
        std::int64_t t = no_bubble;
        const std::int64_t n = cnt(stage, cat, chunk);
        require(n < m_);
        std::int64_t& mem = mem_[static_cast<std::size_t>(stage)];
        require(mem + kMem[static_cast<std::size_t>(cat)] <= max_mem_);
        if (cat < 2 && (cat > 0 || chunk > 0)) {  // F c1 after F c0, B c0 after B c1 ... of the same micro
            const int prev = cat * 2 + chunk - 1;
            require(end_[id(prev / 2, prev % 2, stage, n)] >= 0);
        } else if (cat == 2) {
            require(end_[id(1, chunk, stage, n)] >= 0);
        }
        if (cat < 2) {  // the neighbouring stage's same pass: below for chunk 0, above for chunk 1
            const std::int64_t from = chunk == 0 ? stage - 1 : stage + 1;
            if (from >= 0 && from < p_) {
                const std::int64_t e = end_[id(cat, chunk, from, n)];
                require(e >= 0);
                t = std::max(t, e + kComm + kCost[static_cast<std::size_t>(cat)]);
            }
        }
        if (cnt(stage, 0, 0) > 0) {
            bubble_[static_cast<std::size_t>(stage)] += t - no_bubble;
        }
        end_[id(cat, chunk, stage, n)] = t;
        cur(stage) = t;
        mem += kMem[static_cast<std::size_t>(cat)];
        order_[static_cast<std::size_t>(stage)].push_back({cat == 0   ? Pass::Forward
                                                           : cat == 1 ? Pass::Backward
                                                                      : Pass::Weight,
                                                           static_cast<std::int32_t>(n),
                                                           cat == 0 ? chunk : 1 - chunk});
        if (cat == 1) {
            pending(stage).push_back(chunk);
        }
        ++cnt(stage, cat, chunk);
    }
    void put_w(std::int64_t stage) {
        require(!pending(stage).empty());
        const int chunk = pending(stage).front();
        pending(stage).pop_front();
        put(2, chunk, stage);
    }

    void warm_up() {
        for (std::int64_t i = 0; i < p_; ++i) {
            put(0, 0, i);
        }
        for (std::int64_t i = p_ - 1; i >= 0; --i) {
            if (i < p_ - 1) {
                const std::int64_t ready = end_[id(0, 1, i + 1, 0)] + kComm;
                while (mem_[static_cast<std::size_t>(i)] + kMem[0] * (2 + 2 * i) <= max_mem_ &&
                       cur(i) + kCost[0] <= ready && cnt(i, 0, 0) < m_) {
                    for (std::int64_t j = 0; j <= i; ++j) {
                        put(0, 0, j);
                    }
                }
            }
            put(0, 1, i);
        }
        int chunk = 0;
        for (std::int64_t i = 1; i < p_; ++i) {
            while (cnt(i, 0, 0) + cnt(i, 0, 1) < cnt(i - 1, 0, 0) + cnt(i - 1, 0, 1) ||
                   (cnt(i, 0, 1) <= cnt(i - 1, 0, 1) && cnt(i - 1, 0, 1) < m_)) {
                for (std::int64_t j = p_ - 1; j >= i; --j) {
                    if (cnt(j, 0, chunk) < m_) {
                        put(0, chunk, j);
                    }
                }
                chunk = 1 - chunk;
            }
        }
    }

    // Before a pass that waits on `dep`, run the W's that fit in the wait, and one more when the
    // wait would exceed the bubble this rank may still take.
    void fill_with_w(std::int64_t i, std::optional<std::size_t> dep, bool fill) {
        while (!pending(i).empty() && dep && end_[*dep] + kComm >= cur(i) + kCost[2]) {
            put_w(i);
        }
        if (!pending(i).empty() &&
            end_or_last(dep) + kComm - cur(i) > max_bubble(i) - bubble_[static_cast<std::size_t>(i)] &&
            fill) {
            put_w(i);
        }
    }

    void put_backwards() {
        for (std::int64_t i = 0; i < p_; ++i) {
            while (mem_[static_cast<std::size_t>(i)] + kMem[1] > max_mem_) {
                put_w(i);
            }
        }
        std::vector<std::int64_t> b0;
        std::vector<std::int64_t> b1;
        for (std::int64_t i = 0; i < p_; ++i) {
            if (cnt(i, 1, 1) >= cnt(i, 1, 0)) {
                b0.push_back(i);
            } else if (i == p_ - 1 || end_[id(1, 1, i + 1, cnt(i, 1, 1))] >= 0 || cnt(i, 1, 0) >= m_) {
                b1.push_back(i);
            } else {
                b0.push_back(i);
            }
        }
        std::vector<std::pair<std::int64_t, int>> ranks;
        for (auto it = b1.rbegin(); it != b1.rend(); ++it) {
            ranks.emplace_back(*it, 1);
        }
        for (const std::int64_t i : b0) {
            ranks.emplace_back(i, 0);
        }
        for (const auto& [i, chunk] : ranks) {
            std::optional<std::size_t> dep;
            if (chunk == 1 && i < p_ - 1) {
                dep = id(1, 1, i + 1, cnt(i, 1, 1));
            }
            if (chunk == 0 && i > 0) {
                dep = id(1, 0, i - 1, cnt(i, 1, 0));
            }
            fill_with_w(i, dep, chunk == 1 || fill_b_);
            put(1, chunk, i);
        }
    }

    void put_forwards() {
        for (std::int64_t i = 0; i < p_; ++i) {
            if (cnt(i, 0, 1) >= m_) {
                continue;
            }
            int chunk = -1;
            if (cnt(i, 0, 1) >= cnt(i, 0, 0)) {
                chunk = 0;
            } else if (i == p_ - 1 || end_[id(0, 1, i + 1, cnt(i, 0, 1))] >= 0) {
                chunk = 1;
            } else if (cnt(i, 0, 0) < m_ && (i == 0 || end_[id(0, 0, i - 1, cnt(i, 0, 0))] >= 0)) {
                chunk = 0;
            }
            if (chunk < 0) {
                continue;
            }
            while (mem_[static_cast<std::size_t>(i)] + kMem[0] > max_mem_) {
                put_w(i);
            }
            std::optional<std::size_t> dep;
            if (chunk == 0 && i > 0) {
                dep = id(0, 0, i - 1, cnt(i, 0, 0));
            }
            if (chunk == 1 && i < p_ - 1) {
                dep = id(0, 1, i + 1, cnt(i, 0, 1));
            }
            fill_with_w(i, dep, fill_f_);
            put(0, chunk, i);
        }
    }

    std::int64_t p_;
    std::int64_t m_;
    bool fill_f_;
    bool fill_b_;
    std::vector<std::int64_t> approved_;
    std::int64_t max_approved_ = -1;
    std::int64_t max_mem_;
    std::vector<std::array<std::int64_t, 6>> count_;  // per rank: F c0, F c1, B c0, B c1, W c0, W c1
    std::vector<std::int64_t> end_;  // finish time per (pass, chunk, rank, micro); −1 unset
    std::vector<std::int64_t> cur_;
    std::vector<std::int64_t> mem_;
    std::vector<std::int64_t> bubble_;
    std::vector<std::deque<int>> pending_;  // chunks of B's whose W is still to run, oldest first
    std::vector<std::vector<Step>> order_;
};

// A greedy pass, then passes with its per-rank bubbles approved while the worst bubble shrinks.
[[nodiscard]] Trial try_v(std::int64_t p, std::int64_t m, bool fill_f, bool fill_b,
                          const std::vector<std::int64_t>& approved) {
    Trial t = Greedy(p, m, fill_f, fill_b, approved).run();
    const std::int64_t max_approved =
        approved.empty() ? -1 : *std::max_element(approved.begin(), approved.end());
    if (max_approved < 0 || t.max_bubble < max_approved) {
        Trial next = try_v(p, m, fill_f, fill_b, t.bubble);
        if (next.max_bubble < t.max_bubble) {
            return next;
        }
    }
    return t;
}

}  // namespace

ZeroBubbleVSchedule::ZeroBubbleVSchedule(PipelineShape shape) {
    std::optional<Trial> best;
    try {
        for (const bool fill_b : {true, false}) {
            for (const bool fill_f : {true, false}) {
                Trial t = try_v(shape.stages, shape.microbatches, fill_f, fill_b, {});
                if (!best || t.max_bubble < best->max_bubble) {
                    best = std::move(t);
                }
            }
        }
    } catch (const Unorderable&) {
        throw InputError("schedule=zb-v cannot order " + std::to_string(shape.microbatches) +
                         " micro-batches on parallelism.pipeline_model_parallel_size=" +
                         std::to_string(shape.stages) + " (the reference V scheduler's ordering rules fail)");
    }
    order_ = std::move(best->order);
}

std::vector<Step> ZeroBubbleVSchedule::steps(std::int64_t rank) const {
    return order_.at(static_cast<std::size_t>(rank));
}

}  // namespace trainsim::schedule
