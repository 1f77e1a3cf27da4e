#include "sim/sweep/csv.h"

namespace trainsim::sweep {

std::string csv_cell(std::string_view text) {
    if (text.find_first_of(",\"\r\n") == std::string_view::npos) {
        return std::string(text);
    }
    std::string out = "\"";
    for (const char c : text) {
        out += c;
        if (c == '"') {
            out += '"';
        }
    }
    out += '"';
    return out;
}

std::string value_text(const Json& value) {
    if (value.is_string()) {
        return value.get<std::string>();
    }
    if (value.is_null()) {
        return "";
    }
    return value.dump();
}

std::vector<CsvRecord> parse_csv_records(std::string_view text) {
    std::vector<CsvRecord> records;
    CsvRecord current;
    std::string cell;
    bool quoted = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c != '"') {
                cell += c;
            } else if (i + 1 < text.size() && text[i + 1] == '"') {
                cell += '"';
                ++i;
            } else {
                quoted = false;
            }
            continue;
        }
        switch (c) {
        case '"':
            quoted = true;
            break;
        case ',':
            current.cells.push_back(std::move(cell));
            cell.clear();
            break;
        case '\r':
            break;  // part of CRLF; a bare CR is not written by us
        case '\n':
            current.cells.push_back(std::move(cell));
            cell.clear();
            current.end = i + 1;
            records.push_back(std::move(current));
            current = CsvRecord{};
            break;
        default:
            cell += c;
            break;
        }
    }
    return records;
}

}  // namespace trainsim::sweep
