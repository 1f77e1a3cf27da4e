// `import trainsim` (issue 20): the simulator from Python, through the same entry points as the CLI.
//   trainsim.run(scenario, overrides=None, critical_path=False) -> the dict `trainsim run --format json`
//     prints (with "critical_path" when asked), for a scenario path or a scenario dict;
//   trainsim.sweep(sweep, jobs=0) -> the rows `trainsim sweep` writes, as a list of dicts (numbers as
//     numbers, empty cells as None), which pandas.DataFrame takes directly;
//   trainsim.whatif(scenario, overrides=None, jobs=0, percent=10.0) -> the dict `trainsim whatif
//     --format json` prints.
// Bad input raises trainsim.InputError (a ValueError) with the CLI's one-line message; a run that cannot
// finish raises trainsim.SimulationError (a RuntimeError).
#include <pybind11/pybind11.h>

#include <charconv>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/core/input_error.h"
#include "sim/cost/cost_model.h"
#include "sim/cost/hardware_profile.h"
#include "sim/engine/simulator.h"
#include "sim/experiment/simulate_scenario.h"
#include "sim/report/critical_path.h"
#include "sim/report/report_json.h"
#include "sim/sweep/csv.h"
#include "sim/sweep/sweep_runner.h"
#include "sim/sweep/sweep_spec.h"
#include "sim/sweep/worker_pool.h"
#include "sim/whatif/sensitivity.h"
#include "sim/whatif/whatif_json.h"

namespace py = pybind11;

namespace {

using namespace trainsim;

// Where shipped scenarios and profiles live: TRAINSIM_DATA_DIR as for the CLI, else the source tree.
std::string profile_directory() {
    if (const char* dir = std::getenv("TRAINSIM_DATA_DIR"); dir != nullptr && *dir != '\0') {
        return std::string(dir) + "/hardware";
    }
    return std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/hardware";
}

std::string json_dumps(const py::handle& value) {
    return py::module_::import("json").attr("dumps")(value).cast<std::string>();
}

py::object json_loads(const std::string& text) {
    return py::module_::import("json").attr("loads")(text);
}

std::vector<config::Override> overrides_of(const py::object& overrides) {
    std::vector<config::Override> out;
    if (overrides.is_none()) {
        return out;
    }
    for (const auto& [key, value] : overrides.cast<py::dict>()) {
        // A value is what `--set key=value` would carry: JSON text (a Python str becomes a JSON string).
        out.push_back({py::str(key).cast<std::string>(), json_dumps(value)});
    }
    return out;
}

config::Scenario scenario_of(const py::object& scenario, const py::object& overrides) {
    const std::vector<config::Override> o = overrides_of(overrides);
    if (py::isinstance<py::dict>(scenario)) {
        return config::parse_scenario(json_dumps(scenario), "python", o);
    }
    return config::load_scenario(py::str(scenario).cast<std::string>(), o);
}

unsigned jobs_of(int jobs) {
    if (jobs < 0) {
        throw InputError("jobs=" + std::to_string(jobs) + " must be ≥ 0 (0: one per hardware thread)");
    }
    return jobs == 0 ? sweep::default_jobs() : static_cast<unsigned>(jobs);
}

py::object run(const py::object& scenario, const py::object& overrides, bool critical_path) {
    std::string text;
    {
        const config::Scenario s = scenario_of(scenario, overrides);
        py::gil_scoped_release release;  // a long simulation lets other Python threads run
        const cost::CostModel cost(cost::load_hardware_profile(s.hardware.profile, profile_directory()));
        const experiment::Simulation sim = experiment::simulate_scenario(s, cost);
        nlohmann::ordered_json j = report::to_json(sim.report);
        if (critical_path) {
            j["critical_path"] = report::to_json(report::make_critical_path(sim.program, sim.run));
        }
        text = j.dump();
    }
    return json_loads(text);
}

// A CSV cell as the Python value pandas would read: None for empty, bool, int, float, else str.
py::object cell_value(const std::string& cell) {
    if (cell.empty()) {
        return py::none();
    }
    if (cell == "true" || cell == "false") {
        return py::bool_(cell == "true");
    }
    const char* end = cell.data() + cell.size();
    long long i = 0;
    if (auto [p, ec] = std::from_chars(cell.data(), end, i); ec == std::errc() && p == end) {
        return py::int_(i);
    }
    double d = 0.0;
    if (auto [p, ec] = std::from_chars(cell.data(), end, d); ec == std::errc() && p == end) {
        return py::float_(d);
    }
    return py::str(cell);
}

py::list sweep_rows(const py::object& spec_or_path, int jobs) {
    const sweep::SweepSpec spec = py::isinstance<py::dict>(spec_or_path)
                                      ? sweep::parse_sweep(json_dumps(spec_or_path), "python-sweep.json")
                                      : sweep::load_sweep(py::str(spec_or_path).cast<std::string>());
    sweep::SweepOptions options;
    options.jobs = jobs_of(jobs);
    options.profile_directory = profile_directory();
    std::ostringstream csv;
    {
        py::gil_scoped_release release;
        (void)sweep::run_sweep(spec, options, csv);
    }
    const std::string text = csv.str();
    const std::vector<sweep::CsvRecord> records = sweep::parse_csv_records(text);
    py::list rows;
    for (std::size_t r = 1; r < records.size(); ++r) {
        py::dict row;
        for (std::size_t c = 0; c < records[0].cells.size() && c < records[r].cells.size(); ++c) {
            row[py::str(records[0].cells[c])] = cell_value(records[r].cells[c]);
        }
        rows.append(row);
    }
    return rows;
}

}  // namespace

PYBIND11_MODULE(trainsim, m) {
    m.doc() = "trainsim: a trace-driven simulator of large-transformer training iterations";
    static py::exception<InputError> input_error(m, "InputError", PyExc_ValueError);
    static py::exception<engine::SimulationError> simulation_error(m, "SimulationError", PyExc_RuntimeError);
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) {
                std::rethrow_exception(p);
            }
        } catch (const InputError& e) {
            PyErr_SetString(input_error.ptr(), e.what());
        } catch (const engine::SimulationError& e) {
            PyErr_SetString(simulation_error.ptr(),
                            (std::string("simulation cannot finish: ") + e.what()).c_str());
        }
    });
    m.def("run", &run, py::arg("scenario"), py::arg("overrides") = py::none(),
          py::arg("critical_path") = false,
          "Simulate one iteration of a scenario (a path or a dict) with optional {key: value} overrides; "
          "returns the dict `trainsim run --format json` prints.");
    m.def("sweep", &sweep_rows, py::arg("sweep"), py::arg("jobs") = 0,
          "Run a sweep (a sweep file path or a dict; a relative base resolves against the current "
          "directory for a dict); returns the CSV rows of `trainsim sweep` as a list of dicts.");
    m.def(
        "whatif",
        [](const py::object& scenario, const py::object& overrides, int jobs, double percent) {
            std::string text;
            {
                const config::Scenario s = scenario_of(scenario, overrides);
                whatif::WhatIfOptions options;
                options.jobs = jobs_of(jobs);
                if (!(percent > -100.0 && percent != 0.0 && percent <= 1000.0)) {
                    throw InputError("percent=" + std::to_string(percent) +
                                     " must be in (−100, 1000] and not 0");
                }
                options.profile_factor = 1.0 + percent / 100.0;
                py::gil_scoped_release release;
                const whatif::WhatIf w = whatif::run_whatif(
                    s, cost::load_hardware_profile(s.hardware.profile, profile_directory()), options);
                text = whatif::to_json(w).dump();
            }
            return json_loads(text);
        },
        py::arg("scenario"), py::arg("overrides") = py::none(), py::arg("jobs") = 0,
        py::arg("percent") = 10.0,
        "The iteration time's sensitivity to each profile parameter and layout knob; returns the dict "
        "`trainsim whatif --format json` prints.");
}
