#include "sim/sweep/progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace trainsim::sweep {

std::string format_duration(double seconds) {
    const auto s = static_cast<long long>(std::llround(std::max(0.0, seconds)));
    char text[32];
    if (s >= 3600) {
        std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
    } else {
        std::snprintf(text, sizeof text, "%lld:%02lld", s / 60, s % 60);
    }
    return text;
}

std::string progress_text(std::size_t done, std::size_t total, double rate, bool bar) {
    const double fraction = total == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total);
    char text[160];
    std::string out;
    if (bar) {
        constexpr int kWidth = 24;
        const int filled = static_cast<int>(fraction * kWidth);
        out = "[";
        for (int i = 0; i < kWidth; ++i) {
            out += i < filled ? '=' : (i == filled ? '>' : ' ');
        }
        out += "] ";
        std::snprintf(text, sizeof text, "%zu/%zu %3.0f%%", done, total, 100.0 * fraction);
    } else {
        std::snprintf(text, sizeof text, "%zu/%zu (%.0f%%)", done, total, 100.0 * fraction);
    }
    out += text;
    const char* sep = bar ? "  " : ", ";
    if (rate > 0.0) {
        std::snprintf(text, sizeof text, "%s%.3g/s", sep, rate);
        out += text;
        if (done < total) {
            out += sep + std::string("ETA ") + format_duration(static_cast<double>(total - done) / rate);
        }
    }
    return out;
}

Progress::Progress(std::ostream& out, bool terminal, std::string label, std::size_t total,
                   std::size_t already_done)
    : out_(out), terminal_(terminal), label_(std::move(label)), total_(total), already_done_(already_done),
      done_(already_done) {}

void Progress::advance() {
    const std::lock_guard lock(mutex_);
    ++done_;
    const auto interval = terminal_ ? std::chrono::milliseconds(100) : std::chrono::milliseconds(5000);
    if (Clock::now() - last_draw_ >= interval) {
        draw(false);
    }
}

void Progress::finish() {
    const std::lock_guard lock(mutex_);
    draw(true);
}

void Progress::draw(bool final) {
    const auto now = Clock::now();
    last_draw_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    // The rate of this run only: points a resumed sweep skipped took no time.
    const double rate = elapsed > 0.0 ? static_cast<double>(done_ - already_done_) / elapsed : 0.0;
    std::string text = label_ + " " + progress_text(done_, total_, rate, terminal_);
    if (final) {
        text += (terminal_ ? "  in " : ", in ") + format_duration(elapsed);
    }
    if (terminal_) {
        out_ << "\r" << text << "\x1b[K" << (final ? "\n" : "") << std::flush;
    } else if (final || done_ > already_done_) {
        out_ << text << "\n" << std::flush;
    }
}

}  // namespace trainsim::sweep
