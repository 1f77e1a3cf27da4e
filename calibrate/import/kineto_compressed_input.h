// A std::streambuf over a file that may be gzip-compressed (zlib reads plain files through unchanged), so
// that a trace is parsed as it is decompressed: a 1 GB trace never sits in memory whole.
#pragma once

#include <streambuf>
#include <string>
#include <vector>

namespace trainsim::kineto {

class CompressedInput : public std::streambuf {
public:
    /// Throws InputError "PATH: cannot open (REASON)".
    explicit CompressedInput(const std::string& path);
    ~CompressedInput() override;
    CompressedInput(const CompressedInput&) = delete;
    CompressedInput& operator=(const CompressedInput&) = delete;

    /// Bytes handed to the parser so far (decompressed), for error positions.
    [[nodiscard]] long long consumed() const { return consumed_; }
    /// True once the whole file has been handed out (a parse error then means the file ends early).
    [[nodiscard]] bool exhausted() const { return exhausted_; }

protected:
    /// Refills the buffer; throws InputError "PATH: truncated or corrupt gzip data (REASON)".
    int_type underflow() override;

private:
    std::string path_;
    void* file_ = nullptr;  // gzFile
    std::vector<char> buffer_;
    long long consumed_ = 0;
    bool exhausted_ = false;
};

}  // namespace trainsim::kineto
