#include "sim/sweep/sweep_output.h"

namespace trainsim::sweep {

SweepOutput::SweepOutput(const SweepWork& work, const SweepOptions& options, const SweepSummary& summary,
                         std::ostream& out)
    : out_(out), ordered_([this](const std::string& line) { emit(line); }) {
    if (!options.output_path.empty()) {
        file_ = std::make_unique<CsvAppender>(options.output_path, options.output_option, work.keep_bytes);
    }
    if (work.write_header) {
        emit(work.header);
    }
    if (options.progress != nullptr) {
        progress_ = std::make_unique<Progress>(*options.progress, options.progress_terminal, "sweep",
                                               summary.points, summary.skipped);
    }
}

void SweepOutput::put(std::size_t item, std::string line) {
    ordered_.put(item, std::move(line));
    if (progress_) {
        progress_->advance();
    }
}

void SweepOutput::finish() {
    if (progress_) {
        progress_->finish();
    }
}

void SweepOutput::emit(const std::string& line) {
    if (file_) {
        file_->append(line);
    } else {
        out_ << line << std::flush;
    }
}

}  // namespace trainsim::sweep
