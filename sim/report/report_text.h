// Text and CSV forms of the reports, for a person at a terminal and for pandas.
#pragma once

#include <ostream>

#include "sim/report/iteration_report.h"
#include "sim/report/layer_report.h"

namespace trainsim::report {

void write_text(std::ostream& out, const IterationReport& report);
void write_text(std::ostream& out, const LayerReport& report);
/// A header line and one row; the columns are the scalar keys of the JSON form.
void write_csv(std::ostream& out, const IterationReport& report);
/// A header line and one row per op.
void write_csv(std::ostream& out, const LayerReport& report);

}  // namespace trainsim::report
