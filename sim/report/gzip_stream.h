// A std::ostream that gzips what is written to it into another stream (zlib's deflate with a gzip
// header): `--trace FILE.json.gz` writes the trace compressed as it streams, never whole in memory.
#pragma once

#include <memory>
#include <ostream>
#include <streambuf>
#include <vector>

namespace trainsim::report {

class GzipStreamBuffer : public std::streambuf {
public:
    /// `level`: zlib's 1 (fastest) to 9 (smallest); 6 is zlib's default trade-off.
    explicit GzipStreamBuffer(std::ostream& sink, int level = 6);
    ~GzipStreamBuffer() override;
    GzipStreamBuffer(const GzipStreamBuffer&) = delete;
    GzipStreamBuffer& operator=(const GzipStreamBuffer&) = delete;

    /// Flushes the compressor and writes the gzip trailer; nothing may be written after it. Throws
    /// std::runtime_error when zlib fails. The destructor finishes too, ignoring errors.
    void finish();

protected:
    int_type overflow(int_type c) override;
    int sync() override;

private:
    void deflate_input(int flush);

    struct State;
    std::unique_ptr<State> state_;
    std::ostream& sink_;
    std::vector<char> input_;
    std::vector<char> output_;
    bool finished_ = false;
};

/// An ostream over a GzipStreamBuffer; call finish() (or let it go out of scope) to complete the file.
class GzipOStream : public std::ostream {
public:
    explicit GzipOStream(std::ostream& sink, int level = 6) : std::ostream(nullptr), buffer_(sink, level) {
        rdbuf(&buffer_);
    }
    void finish() {
        flush();
        buffer_.finish();
    }

private:
    GzipStreamBuffer buffer_;
};

}  // namespace trainsim::report
