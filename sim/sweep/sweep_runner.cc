#include "sim/sweep/sweep_runner.h"

#include <atomic>
#include <memory>

#include "sim/sweep/grid.h"
#include "sim/sweep/resume.h"
#include "sim/sweep/sweep_output.h"
#include "sim/sweep/sweep_table.h"
#include "sim/sweep/worker_pool.h"

namespace trainsim::sweep {

config::Scenario load_point(const SweepSpec& spec, std::size_t point) {
    return config::parse_scenario(spec.base_text, spec.default_name, point_overrides(spec, point));
}

std::string evaluate_point(const SweepSpec& spec, std::size_t point, PointRunner& runner, bool* failed) {
    const PointOutcome outcome = runner.simulate_made([&] { return load_point(spec, point); });
    if (failed != nullptr) {
        *failed = !outcome.report.has_value();
    }
    return row_line(point_cells(spec, point), outcome);
}

SweepWork plan_work(const SweepSpec& spec, const SweepOptions& options) {
    SweepWork work;
    work.header = header_line(spec);
    ExistingOutput existing;
    if (!options.output_path.empty()) {
        existing =
            scan_existing_output(options.output_path, options.output_option, work.header, spec.axes.size());
    }
    work.keep_bytes = existing.whole_bytes;
    work.write_header = !existing.has_header;
    for (std::size_t p = 0; p < spec.size(); ++p) {
        if (existing.done.empty() || !existing.done.contains(point_cells(spec, p))) {
            work.todo.push_back(p);
        }
    }
    return work;
}

SweepSummary run_sweep(const SweepSpec& spec, const SweepOptions& options, std::ostream& out) {
    const SweepWork work = plan_work(spec, options);
    SweepSummary summary;
    summary.points = spec.size();
    summary.skipped = summary.points - work.todo.size();

    SweepOutput output(work, options, summary, out);
    const unsigned jobs = std::max(1u, options.jobs);
    std::vector<PointRunner> runners(jobs, PointRunner(options.profile_directory, options.fold));
    std::atomic<std::size_t> failed{0};
    parallel_for(work.todo.size(), jobs, [&](std::size_t item, unsigned worker) {
        bool point_failed = false;
        std::string line = evaluate_point(spec, work.todo[item], runners[worker], &point_failed);
        if (point_failed) {
            failed.fetch_add(1, std::memory_order_relaxed);
        }
        output.put(item, std::move(line));
    });
    output.finish();
    summary.simulated = work.todo.size();
    summary.failed = failed.load();
    return summary;
}

}  // namespace trainsim::sweep
