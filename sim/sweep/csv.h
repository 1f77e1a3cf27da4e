// RFC 4180 CSV cells and records: what pandas.read_csv reads back without options.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/strict_json.h"

namespace trainsim::sweep {

/// `text` as one CSV cell: quoted (with doubled quotes) when it holds a comma, quote, CR or LF.
[[nodiscard]] std::string csv_cell(std::string_view text);

/// An axis value as it appears in its CSV column: strings bare, numbers and booleans as in JSON, null as
/// an empty cell, objects and arrays as compact JSON (before csv_cell quoting).
[[nodiscard]] std::string value_text(const Json& value);

/// One complete record parsed from CSV text: its cells, and where the next record starts.
struct CsvRecord {
    std::vector<std::string> cells;
    std::size_t end = 0;  // offset just past the record's line ending
};

/// Splits `text` into its complete records (each ending in LF or CRLF outside quotes). A final record
/// without its line ending is not returned: it is what a killed writer left half-written.
[[nodiscard]] std::vector<CsvRecord> parse_csv_records(std::string_view text);

}  // namespace trainsim::sweep
