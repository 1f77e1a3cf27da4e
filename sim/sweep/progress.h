// Progress of a long run on stderr: on a terminal a bar redrawn in place with the rate and the time
// left; otherwise (a log file, CI) a plain line every few seconds, so logs stay readable.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <ostream>
#include <string>

namespace trainsim::sweep {

/// "[=========>          ]  123/456  27%  12.3/s  ETA 0:31" (bar) or "123/456 (27%), 12.3/s, ETA 0:31".
/// `rate` is items per second (0 when unknown: no ETA is shown).
[[nodiscard]] std::string progress_text(std::size_t done, std::size_t total, double rate, bool bar);

/// "0:31", "12:05", "3:02:07".
[[nodiscard]] std::string format_duration(double seconds);

class Progress {
public:
    /// `total` items, `already_done` of them before this run (a resumed sweep); `label` starts each line.
    Progress(std::ostream& out, bool terminal, std::string label, std::size_t total,
             std::size_t already_done);

    /// One more item done. Thread-safe; redraws at most 10 times a second (every 5 s without a terminal).
    void advance();

    /// The final line (the bar's line ends).
    void finish();

private:
    void draw(bool final);

    using Clock = std::chrono::steady_clock;
    std::ostream& out_;
    bool terminal_;
    std::string label_;
    std::size_t total_;
    std::size_t already_done_;
    std::size_t done_;
    Clock::time_point start_ = Clock::now();
    Clock::time_point last_draw_{};
    std::mutex mutex_;
};

}  // namespace trainsim::sweep
