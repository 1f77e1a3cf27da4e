#include "sim/sweep/resume.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/core/input_error.h"
#include "sim/sweep/csv.h"

namespace trainsim::sweep {

ExistingOutput scan_existing_output(const std::string& path, const std::string& option,
                                    const std::string& header, std::size_t axes) {
    ExistingOutput out;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        return out;
    }
    if (std::filesystem::is_directory(path, ec)) {
        throw InputError(option + "=" + path + ": is a directory, not a CSV file");
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw InputError(option + "=" + path + ": cannot be read to resume (permission denied?)");
    }
    std::ostringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    out.file_bytes = text.size();
    const std::vector<CsvRecord> records = parse_csv_records(text);
    if (records.empty()) {
        // Empty, or a header cut short by a kill: start over.
        return out;
    }
    if (text.compare(0, records.front().end, header) != 0) {
        throw InputError(
            option + "=" + path +
            ": exists with another header (another sweep's output?); remove it or choose another file");
    }
    out.has_header = true;
    out.whole_bytes = records.front().end;
    const std::size_t columns = records.front().cells.size();
    for (std::size_t r = 1; r < records.size(); ++r) {
        const std::vector<std::string>& cells = records[r].cells;
        if (cells.size() != columns) {
            if (r + 1 == records.size()) {
                break;  // a row cut short inside a quoted cell: as half-written as one without its LF
            }
            throw InputError(option + "=" + path + ": row " + std::to_string(r + 1) + " has " +
                             std::to_string(cells.size()) + " cells, not the " + std::to_string(columns) +
                             " of the header");
        }
        out.done.emplace(cells.begin(), cells.begin() + static_cast<std::ptrdiff_t>(axes));
        out.whole_bytes = records[r].end;
    }
    return out;
}

}  // namespace trainsim::sweep
