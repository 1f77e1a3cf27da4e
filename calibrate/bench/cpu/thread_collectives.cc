#include "calibrate/bench/cpu/thread_collectives.h"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace trainsim::calibrate {

namespace {

constexpr std::int64_t kElementBytes = 4;  // fp32 sums

class ThreadCollective : public TimedOp {
public:
    explicit ThreadCollective(const CollectiveCase& c)
        : c_(c), n_(static_cast<std::size_t>(c.ranks)), start_(c.ranks), phase_(c.ranks), end_(c.ranks) {
        if (c.ranks < 2 || c.bytes % (kElementBytes * c.ranks) != 0) {
            throw std::invalid_argument(
                "a thread collective needs >= 2 ranks and whole fp32 chunks per rank");
        }
        const auto total = static_cast<std::size_t>(c.bytes / kElementBytes);
        chunk_ = total / n_;
        const bool gather = c.op == cost::CollectiveKind::AllGather;
        const bool scatter = c.op == cost::CollectiveKind::ReduceScatter;
        for (std::size_t r = 0; r < n_; ++r) {
            send_.emplace_back(gather ? chunk_ : total, 1.0F + static_cast<float>(r));
            recv_.emplace_back(scatter ? chunk_ : total, 0.0F);
        }
        for (std::size_t r = 1; r < n_; ++r) {
            threads_.emplace_back([this, r] { worker(r); });
        }
    }

    ThreadCollective(const ThreadCollective&) = delete;
    ThreadCollective& operator=(const ThreadCollective&) = delete;

    ~ThreadCollective() override {
        stop_ = true;
        start_.arrive_and_wait();  // releases the workers, which see stop_ and return
        for (std::thread& t : threads_) {
            t.join();
        }
    }

    double seconds_per_call(int calls) override {
        const auto begin = std::chrono::steady_clock::now();
        for (int call = 0; call < calls; ++call) {
            start_.arrive_and_wait();
            execute(0);
            end_.arrive_and_wait();
        }
        const auto finish = std::chrono::steady_clock::now();
        return std::chrono::duration<double>(finish - begin).count() / calls;
    }

private:
    void worker(std::size_t rank) {
        while (true) {
            start_.arrive_and_wait();
            if (stop_) {
                return;
            }
            execute(rank);
            end_.arrive_and_wait();
        }
    }

    // Sums chunk `owner` of every rank's send buffer into `out`.
    void reduce_chunk(std::size_t owner, float* out) const {
        const std::size_t offset = owner * chunk_;
        std::copy_n(send_[0].data() + offset, chunk_, out);
        for (std::size_t q = 1; q < n_; ++q) {
            const float* in = send_[q].data() + offset;
            for (std::size_t i = 0; i < chunk_; ++i) {
                out[i] += in[i];
            }
        }
    }

    void execute(std::size_t r) {
        switch (c_.op) {
        case cost::CollectiveKind::AllReduce:
            reduce_chunk(r, recv_[r].data() + r * chunk_);
            phase_.arrive_and_wait();  // every owner's chunk is reduced
            for (std::size_t q = 0; q < n_; ++q) {
                if (q != r) {
                    std::copy_n(recv_[q].data() + q * chunk_, chunk_, recv_[r].data() + q * chunk_);
                }
            }
            break;
        case cost::CollectiveKind::AllGather:
            for (std::size_t q = 0; q < n_; ++q) {
                std::copy_n(send_[q].data(), chunk_, recv_[r].data() + q * chunk_);
            }
            break;
        case cost::CollectiveKind::ReduceScatter:
            reduce_chunk(r, recv_[r].data());
            break;
        case cost::CollectiveKind::AllToAll:
            // Rank r receives chunk r of every rank's send buffer, in rank order.
            for (std::size_t q = 0; q < n_; ++q) {
                std::copy_n(send_[q].data() + r * chunk_, chunk_, recv_[r].data() + q * chunk_);
            }
            break;
        case cost::CollectiveKind::SendRecv: {
            const std::size_t from = (r + n_ - 1) % n_;  // each rank receives from its ring predecessor
            std::copy(send_[from].begin(), send_[from].end(), recv_[r].begin());
            break;
        }
        }
    }

    CollectiveCase c_;
    std::size_t n_;
    std::size_t chunk_ = 0;
    std::vector<std::vector<float>> send_;
    std::vector<std::vector<float>> recv_;
    std::barrier<> start_;
    std::barrier<> phase_;
    std::barrier<> end_;
    std::atomic<bool> stop_ = false;
    std::vector<std::thread> threads_;
};

}  // namespace

std::unique_ptr<TimedOp> make_thread_collective(const CollectiveCase& c) {
    return std::make_unique<ThreadCollective>(c);
}

}  // namespace trainsim::calibrate
