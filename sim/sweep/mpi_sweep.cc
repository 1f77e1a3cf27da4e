#include "sim/sweep/mpi_sweep.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#include "sim/core/input_error.h"
#include "sim/sweep/sweep_output.h"
#include "sim/sweep/worker_pool.h"

#ifdef TRAINSIM_WITH_MPI
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mpi.h>
#include <mutex>
#endif

namespace trainsim::sweep {

bool launched_with_several_ranks() {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"}) {
        if (const char* value = std::getenv(name); value != nullptr && std::atoi(value) > 1) {
            return true;
        }
    }
    return false;
}

#ifndef TRAINSIM_WITH_MPI

bool built_with_mpi() {
    return false;
}

SweepSummary run_sweep_mpi(const SweepSpec&, const SweepOptions&, std::ostream&, bool*) {
    throw InputError("trainsim sweep: this build has no MPI (install libopenmpi-dev and rebuild); run it "
                     "without mpirun");
}

#else

namespace {

constexpr int kRowTag = 1;

// One finished row on its way to rank 0: its position in the work list, then the line.
std::string pack(std::uint64_t item, const std::string& line) {
    std::string buffer(sizeof item, '\0');
    std::memcpy(buffer.data(), &item, sizeof item);
    return buffer + line;
}

// Rows finished by worker threads, sent by the main thread (MPI is initialised FUNNELED: only the main
// thread calls it).
class Outbox {
public:
    void push(std::string message) {
        {
            const std::lock_guard lock(mutex_);
            queue_.push_back(std::move(message));
        }
        ready_.notify_one();
    }
    void close() {
        {
            const std::lock_guard lock(mutex_);
            closed_ = true;
        }
        ready_.notify_one();
    }
    // Waits for a message; false once closed and empty.
    bool pop(std::string& message) {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return closed_ || !queue_.empty(); });
        if (queue_.empty()) {
            return false;
        }
        message = std::move(queue_.front());
        queue_.pop_front();
        return true;
    }

private:
    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<std::string> queue_;
    bool closed_ = false;
};

struct MpiSession {
    MpiSession() {
        int provided = 0;
        MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
    }
    ~MpiSession() { MPI_Finalize(); }
    MpiSession(const MpiSession&) = delete;
    MpiSession& operator=(const MpiSession&) = delete;
    int rank = 0;
    int size = 1;
};

}  // namespace

bool built_with_mpi() {
    return true;
}

SweepSummary run_sweep_mpi(const SweepSpec& spec, const SweepOptions& options, std::ostream& out,
                           bool* is_root) {
    const MpiSession mpi;
    *is_root = mpi.rank == 0;
    // Every rank reads the existing output the same way, so all agree on what is left to do.
    const SweepWork work = plan_work(spec, options);
    // Nobody writes before everybody has read: rank 0 appends to the file the others just read.
    MPI_Barrier(MPI_COMM_WORLD);
    const auto ranks = static_cast<std::size_t>(mpi.size);
    const auto rank = static_cast<std::size_t>(mpi.rank);
    std::vector<std::size_t> mine;  // positions in work.todo
    for (std::size_t k = rank; k < work.todo.size(); k += ranks) {
        mine.push_back(k);
    }
    SweepSummary summary;
    summary.points = spec.size();
    summary.skipped = summary.points - work.todo.size();
    const unsigned jobs = std::max(1u, options.jobs);
    std::vector<PointRunner> runners(jobs, PointRunner(options.profile_directory, options.fold));
    std::atomic<std::size_t> failed{0};
    auto evaluate = [&](std::size_t k, unsigned worker) {
        bool point_failed = false;
        std::string line = evaluate_point(spec, work.todo[k], runners[worker], &point_failed);
        if (point_failed) {
            failed.fetch_add(1, std::memory_order_relaxed);
        }
        return line;
    };

    if (mpi.rank != 0) {
        Outbox outbox;
        std::exception_ptr error;
        std::thread workers([&] {
            try {
                parallel_for(mine.size(), jobs, [&](std::size_t i, unsigned w) {
                    outbox.push(pack(mine[i], evaluate(mine[i], w)));
                });
            } catch (...) {
                error = std::current_exception();
            }
            outbox.close();
        });
        std::string message;
        while (outbox.pop(message)) {
            MPI_Send(message.data(), static_cast<int>(message.size()), MPI_BYTE, 0, kRowTag, MPI_COMM_WORLD);
        }
        workers.join();
        if (error) {
            std::rethrow_exception(error);
        }
        summary.simulated = mine.size();
        summary.failed = failed.load();
        return summary;
    }

    SweepOutput output(work, options, summary, out);
    std::exception_ptr error;
    std::thread workers([&] {
        try {
            parallel_for(mine.size(), jobs,
                         [&](std::size_t i, unsigned w) { output.put(mine[i], evaluate(mine[i], w)); });
        } catch (...) {
            error = std::current_exception();
        }
    });
    // The other ranks' rows, as they finish.
    for (std::size_t received = 0; received < work.todo.size() - mine.size(); ++received) {
        MPI_Status status;
        MPI_Probe(MPI_ANY_SOURCE, kRowTag, MPI_COMM_WORLD, &status);
        int bytes = 0;
        MPI_Get_count(&status, MPI_BYTE, &bytes);
        std::string message(static_cast<std::size_t>(bytes), '\0');
        MPI_Recv(message.data(), bytes, MPI_BYTE, status.MPI_SOURCE, kRowTag, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        std::uint64_t item = 0;
        std::memcpy(&item, message.data(), sizeof item);
        // The row's last cell is its error, empty when the point simulated: then the line ends ",\n".
        if (message.size() >= sizeof item + 2 && message[message.size() - 2] != ',') {
            failed.fetch_add(1);
        }
        output.put(static_cast<std::size_t>(item), message.substr(sizeof item));
    }
    workers.join();
    if (error) {
        std::rethrow_exception(error);
    }
    output.finish();
    summary.simulated = work.todo.size();
    summary.failed = failed.load();
    return summary;
}

#endif

}  // namespace trainsim::sweep
