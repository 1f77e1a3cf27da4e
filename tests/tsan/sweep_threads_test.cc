// The threads of `trainsim sweep`, `plan` and `whatif`: the worker pool, the ordered CSV output and the
// progress line, driven from many threads at once. Part of trainsim_tests (the results), and built alone
// under ThreadSanitizer by tests/tsan/CMakeLists.txt (scripts/sanitize.sh), where a data race in them
// fails the run. The simulator a worker calls shares nothing mutable between threads (no mutable
// statics in sim/; each worker owns its PointRunner and cost model), so these are the shared objects.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <latch>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "sim/sweep/ordered_output.h"
#include "sim/sweep/progress.h"
#include "sim/sweep/worker_pool.h"

namespace trainsim::sweep {
namespace {

constexpr unsigned kThreads = 8;

// Holds each of the first kThreads items until all kThreads workers hold one, so that the threads run at
// once even where an item takes nanoseconds (a blocked worker takes no other item, so the first kThreads
// items are on kThreads different threads).
class AllWorkersStarted {
public:
    void wait(std::size_t item) {
        if (item < kThreads) {
            started_.arrive_and_wait();
        }
    }

private:
    std::latch started_{kThreads};
};

TEST(SweepThreads, EveryItemRunsOnceOnAWorkerItNames) {
    constexpr std::size_t kItems = 5000;
    std::vector<int> runs(kItems, 0);                  // each item's slot, written by one thread
    std::vector<std::size_t> per_worker(kThreads, 0);  // each worker's own counter
    AllWorkersStarted together;
    parallel_for(kItems, kThreads, [&](std::size_t item, unsigned worker) {
        together.wait(item);
        ASSERT_LT(worker, kThreads);
        ++runs[item];
        ++per_worker[worker];
    });
    EXPECT_EQ(std::count(runs.begin(), runs.end(), 1), static_cast<std::ptrdiff_t>(kItems));
    std::size_t total = 0;
    for (const std::size_t n : per_worker) {
        total += n;
    }
    EXPECT_EQ(total, kItems);
}

TEST(SweepThreads, TheFirstFailureStopsNewItemsAndIsRethrownOnce) {
    std::atomic<std::size_t> ran{0};
    EXPECT_THROW(parallel_for(100000, kThreads,
                              [&](std::size_t item, unsigned) {
                                  ran.fetch_add(1);
                                  if (item % 1000 == 37) {
                                      throw std::runtime_error("point " + std::to_string(item));
                                  }
                              }),
                 std::runtime_error);
    // No new item starts after a failure, so far fewer than all of them ran.
    EXPECT_LT(ran.load(), 100000U);
}

TEST(SweepThreads, ResultsFinishingInAnyOrderAreWrittenInItemOrder) {
    constexpr std::size_t kItems = 400;
    std::string written;  // only OrderedOutput's emit writes it, under its lock
    OrderedOutput ordered([&](const std::string& line) { written += line; });
    AllWorkersStarted together;
    parallel_for(kItems, kThreads, [&](std::size_t item, unsigned) {
        together.wait(item);
        // Later items often finish first: a result must wait for every earlier one.
        std::this_thread::sleep_for(std::chrono::microseconds((kItems - item) % 7 * 50));
        ordered.put(item, std::to_string(item) + "\n");
    });
    std::string expected;
    for (std::size_t i = 0; i < kItems; ++i) {
        expected += std::to_string(i) + "\n";
    }
    EXPECT_EQ(written, expected);
    EXPECT_EQ(ordered.emitted(), kItems);
}

TEST(SweepThreads, ProgressCountsEveryItemFromEveryThread) {
    constexpr std::size_t kItems = 3000;
    std::ostringstream out;
    Progress progress(out, /*terminal=*/false, "sweep", kItems + 10, /*already_done=*/10);
    AllWorkersStarted together;
    parallel_for(kItems, kThreads, [&](std::size_t item, unsigned) {
        together.wait(item);
        progress.advance();
    });
    progress.finish();
    EXPECT_NE(out.str().find("3010/3010 (100%)"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace trainsim::sweep
