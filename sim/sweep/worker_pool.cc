#include "sim/sweep/worker_pool.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace trainsim::sweep {

unsigned default_jobs() {
    return std::max(1u, std::thread::hardware_concurrency());
}

void parallel_for(std::size_t count, unsigned jobs, const std::function<void(std::size_t, unsigned)>& work) {
    const auto threads = static_cast<unsigned>(std::min<std::size_t>(std::max(jobs, 1u), count));
    if (threads <= 1) {
        for (std::size_t i = 0; i < count; ++i) {
            work(i, 0);
        }
        return;
    }
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr first_error;
    std::mutex error_mutex;
    auto loop = [&](unsigned worker) {
        while (!failed.load(std::memory_order_relaxed)) {
            const std::size_t item = next.fetch_add(1, std::memory_order_relaxed);
            if (item >= count) {
                return;
            }
            try {
                work(item, worker);
            } catch (...) {
                const std::lock_guard lock(error_mutex);
                if (!first_error) {
                    first_error = std::current_exception();
                }
                failed.store(true);
            }
        }
    };
    {
        std::vector<std::jthread> pool;
        pool.reserve(threads - 1);
        for (unsigned w = 1; w < threads; ++w) {
            pool.emplace_back(loop, w);
        }
        loop(0);
    }  // joins
    if (first_error) {
        std::rethrow_exception(first_error);
    }
}

}  // namespace trainsim::sweep
