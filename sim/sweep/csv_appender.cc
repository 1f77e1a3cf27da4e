#include "sim/sweep/csv_appender.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include "sim/core/input_error.h"

namespace trainsim::sweep {

CsvAppender::CsvAppender(const std::string& path, std::string option, std::size_t keep_bytes)
    : path_(path), option_(std::move(option)) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) {
        throw InputError(option_ + "=" + path_ + ": cannot be written (" + std::strerror(errno) + ")");
    }
    const off_t size = ::lseek(fd_, 0, SEEK_END);
    if (size > static_cast<off_t>(keep_bytes) && ::ftruncate(fd_, static_cast<off_t>(keep_bytes)) != 0) {
        const int error = errno;
        ::close(fd_);
        throw InputError(option_ + "=" + path_ + ": cannot cut its half-written last row (" +
                         std::strerror(error) + ")");
    }
}

CsvAppender::~CsvAppender() {
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

void CsvAppender::append(const std::string& line) {
    const char* data = line.data();
    std::size_t left = line.size();
    while (left > 0) {
        const ssize_t n = ::write(fd_, data, left);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            throw InputError(option_ + "=" + path_ + ": write failed (" + std::strerror(errno) + ")");
        }
        data += n;
        left -= static_cast<std::size_t>(n);
    }
}

}  // namespace trainsim::sweep
