// Line-level scanners for nccl-tests output as real logs contain it: launcher prefixes (mpirun
// --tag-output, srun --label), the binary's name, Rank lines of every nccl-tests version, numbers with the
// precision they were printed with, and result rows of every column layout.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::calibrate::nccl_log {

/// A number as the log printed it: its value and half a unit in its last printed place (the rounding it
/// carries: "0.01" ± 0.005, "12174" ± 0.5).
struct PrintedNumber {
    double value = 0.0;
    double half_unit = 0.0;
};

/// A plain decimal number ("135.8", "12174", "0.00"); nullopt for anything else.
[[nodiscard]] std::optional<PrintedNumber> parse_printed(std::string_view s);

[[nodiscard]] bool is_whole_number(std::string_view s);

/// A lower-case name such as float, bfloat16, sum, none (the type and redop columns).
[[nodiscard]] bool is_name(std::string_view s);

/// The line without a launcher's tag: "[1,0]<stdout>:" (Open MPI --tag-output), "0: " (srun --label),
/// a trailing CR, and surrounding blanks.
[[nodiscard]] std::string strip_launcher_prefix(std::string line);

/// The NAME of the first "NAME_perf" or "NAME_perf_mpi" word ("./build/all_reduce_perf", "# Collective
/// test starting: all_gather_perf_mpi"), or "".
[[nodiscard]] std::string binary_name(std::string_view line);

/// Whitespace-separated words.
[[nodiscard]] std::vector<std::string> split(std::string_view line);

/// "#  Rank  0 Group  0 Pid 6899 on HOST device 0 ..." (2.x) or "#   Rank  0 Pid 112372 on HOST device
/// 0 ..." (before groups): the rank and the host. `words` are the words after the '#'.
struct RankLine {
    std::string rank;
    std::string host;
};
[[nodiscard]] std::optional<RankLine> parse_rank_line(const std::vector<std::string>& words);

/// Whether a line is meant as a result row: size and count are whole numbers and the type a name. Other
/// lines that are not '#' headers come from NCCL, MPI, ssh, Slurm or the shell and are skipped.
[[nodiscard]] bool looks_like_row(const std::vector<std::string>& words);

/// Where a row's columns are: size count type [redop] [root], then time algbw busbw #wrong for the
/// out-of-place and the in-place run. nccl-tests before 2.10 prints no root, all_gather before that no
/// redop, and alltoall an empty redop; so the layout is read from the row itself.
struct RowLayout {
    bool has_redop = false;
    bool has_root = false;
    std::size_t first_side = 0;  // index of the out-of-place time
};
[[nodiscard]] std::optional<RowLayout> row_layout(const std::vector<std::string>& words);

}  // namespace trainsim::calibrate::nccl_log
