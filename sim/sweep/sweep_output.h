// Where a sweep's rows go, shared by the threaded and the MPI sweep: the CSV file (or the output stream),
// its header when the file has none, the rows in grid order whatever order they finish in, and the
// progress line.
#pragma once

#include <cstddef>
#include <memory>
#include <ostream>
#include <string>

#include "sim/sweep/csv_appender.h"
#include "sim/sweep/ordered_output.h"
#include "sim/sweep/progress.h"
#include "sim/sweep/sweep_runner.h"

namespace trainsim::sweep {

class SweepOutput {
public:
    /// Opens the output (`options.output_path`, or `out` when it is empty), writes the header if `work`
    /// says so, and starts the progress line (when `options.progress` is set) at `summary`'s counts.
    /// Throws InputError when the file cannot be opened.
    SweepOutput(const SweepWork& work, const SweepOptions& options, const SweepSummary& summary,
                std::ostream& out);

    /// Row `item` (a position in the work's to-do list): written once every earlier one is. Thread-safe.
    void put(std::size_t item, std::string line);

    /// Ends the progress line.
    void finish();

private:
    void emit(const std::string& line);

    std::unique_ptr<CsvAppender> file_;
    std::ostream& out_;
    OrderedOutput ordered_;
    std::unique_ptr<Progress> progress_;
};

}  // namespace trainsim::sweep
