// Appends whole lines to a CSV file: each line goes to the file in one write() and reaches the kernel
// before append() returns, so a sweep killed at any moment leaves whole rows and at most one partial
// line (which resume.h cuts off).
#pragma once

#include <cstddef>
#include <string>

namespace trainsim::sweep {

class CsvAppender {
public:
    /// Opens `path` for appending (creating it), first cutting it to `keep_bytes` when it is longer
    /// (a half-written last line). Throws InputError naming `option` when it cannot.
    CsvAppender(const std::string& path, std::string option, std::size_t keep_bytes);
    ~CsvAppender();
    CsvAppender(const CsvAppender&) = delete;
    CsvAppender& operator=(const CsvAppender&) = delete;

    /// Writes `line` (ending in LF) whole. Throws InputError on a failed write (disk full).
    void append(const std::string& line);

private:
    std::string path_;
    std::string option_;
    int fd_ = -1;
};

}  // namespace trainsim::sweep
