#include "calibrate/import/kineto_compressed_input.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>

#include "sim/core/input_error.h"

namespace trainsim::kineto {

namespace {

// Large enough that zlib's per-call overhead vanishes, small enough to be no memory at all.
constexpr unsigned kBufferBytes = 1u << 20;

}  // namespace

CompressedInput::CompressedInput(const std::string& path) : path_(path), buffer_(kBufferBytes) {
    errno = 0;
    gzFile f = gzopen(path.c_str(), "rb");
    if (f == nullptr) {
        throw InputError(path + ": cannot open (" + (errno != 0 ? std::strerror(errno) : "out of memory") +
                         ")");
    }
    file_ = f;
    setg(buffer_.data(), buffer_.data(), buffer_.data());
}

CompressedInput::~CompressedInput() {
    gzclose(static_cast<gzFile>(file_));
}

CompressedInput::int_type CompressedInput::underflow() {
    if (gptr() < egptr()) {
        return traits_type::to_int_type(*gptr());
    }
    consumed_ += egptr() - eback();
    auto* f = static_cast<gzFile>(file_);
    const int n = gzread(f, buffer_.data(), kBufferBytes);
    if (n < 0) {
        int code = 0;
        const char* message = gzerror(f, &code);
        throw InputError(path_ + ": truncated or corrupt gzip data after " + std::to_string(consumed_) +
                         " bytes (" + (code == Z_ERRNO ? std::strerror(errno) : message) + ")");
    }
    if (n == 0) {
        // gzread returns 0 both at a clean end and at a gzip stream cut short; only gzerror tells.
        int code = 0;
        const char* message = gzerror(f, &code);
        if (code != Z_OK && code != Z_STREAM_END) {
            throw InputError(path_ + ": truncated or corrupt gzip data after " + std::to_string(consumed_) +
                             " bytes (" + message + ")");
        }
        setg(buffer_.data(), buffer_.data(), buffer_.data());
        exhausted_ = true;
        return traits_type::eof();
    }
    setg(buffer_.data(), buffer_.data(), buffer_.data() + n);
    return traits_type::to_int_type(*gptr());
}

}  // namespace trainsim::kineto
