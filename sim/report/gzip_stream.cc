#include "sim/report/gzip_stream.h"

#include <zlib.h>

#include <stdexcept>

namespace trainsim::report {

namespace {
constexpr std::size_t kChunk = 1 << 16;
constexpr int kGzipWindowBits = 15 + 16;  // 2^15 window; +16 asks zlib for a gzip header and trailer
constexpr int kMemoryLevel = 8;           // zlib's default
}  // namespace

struct GzipStreamBuffer::State {
    z_stream z{};
};

GzipStreamBuffer::GzipStreamBuffer(std::ostream& sink, int level)
    : state_(std::make_unique<State>()), sink_(sink), input_(kChunk), output_(kChunk) {
    if (deflateInit2(&state_->z, level, Z_DEFLATED, kGzipWindowBits, kMemoryLevel, Z_DEFAULT_STRATEGY) !=
        Z_OK) {
        throw std::runtime_error("zlib: deflateInit2 failed");
    }
    setp(input_.data(), input_.data() + input_.size());
}

GzipStreamBuffer::~GzipStreamBuffer() {
    try {
        finish();
    } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw; finish() reports errors
    }
    deflateEnd(&state_->z);
}

void GzipStreamBuffer::deflate_input(int flush) {
    z_stream& z = state_->z;
    z.next_in = reinterpret_cast<Bytef*>(pbase());
    z.avail_in = static_cast<uInt>(pptr() - pbase());
    do {
        z.next_out = reinterpret_cast<Bytef*>(output_.data());
        z.avail_out = static_cast<uInt>(output_.size());
        const int rc = deflate(&z, flush);
        if (rc == Z_STREAM_ERROR) {
            throw std::runtime_error("zlib: deflate failed");
        }
        sink_.write(output_.data(), static_cast<std::streamsize>(output_.size() - z.avail_out));
    } while (z.avail_out == 0);
    setp(input_.data(), input_.data() + input_.size());
}

GzipStreamBuffer::int_type GzipStreamBuffer::overflow(int_type c) {
    if (finished_) {
        return traits_type::eof();
    }
    deflate_input(Z_NO_FLUSH);
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
        *pptr() = traits_type::to_char_type(c);
        pbump(1);
    }
    return sink_ ? traits_type::not_eof(c) : traits_type::eof();
}

int GzipStreamBuffer::sync() {
    // Compressed data is pushed at overflow and finish; a flush does not cut a deflate block, which
    // would cost compression for nothing.
    return sink_ ? 0 : -1;
}

void GzipStreamBuffer::finish() {
    if (finished_) {
        return;
    }
    finished_ = true;
    deflate_input(Z_FINISH);
    sink_.flush();
}

}  // namespace trainsim::report
