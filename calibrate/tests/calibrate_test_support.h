// Helpers shared by the calibration tests: paths in the source tree, a private temporary directory per
// test, and running the command-line tools.
#pragma once

#include <filesystem>
#include <string>

namespace trainsim::calibrate::testing {

[[nodiscard]] inline std::string source_path(const std::string& relative) {
    return std::string(TRAINSIM_SOURCE_DIR) + "/" + relative;
}

/// A directory that exists for the scope of the object, named after the running test.
class TempDir {
public:
    TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir();
    [[nodiscard]] std::string path(const std::string& name) const { return (dir_ / name).string(); }
    [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }

private:
    std::filesystem::path dir_;
};

struct CommandResult {
    int status = -1;
    std::string out;
    std::string err;
};

/// Runs a shell command line in `cwd` and captures both streams.
[[nodiscard]] CommandResult run_command(const std::string& command_line,
                                        const std::string& cwd = TRAINSIM_SOURCE_DIR);

/// `trainsim-calibrate ARGS` and `trainsim ARGS`, from the source root.
[[nodiscard]] CommandResult calibrate(const std::string& args);
[[nodiscard]] CommandResult trainsim(const std::string& args);

/// `trainsim-calibrate fit --base h100-80gb-dgx` on the published H100 measurements
/// (calibrate/data/h100-published.measurements.json), written to `output`.
[[nodiscard]] inline CommandResult refit_h100_from_published(const std::string& output) {
    return calibrate("fit --base h100-80gb-dgx '" +
                     source_path("calibrate/data/h100-published.measurements.json") + "' --output '" +
                     output + "'");
}

/// Writes `text` to `path`.
void write_file(const std::string& path, const std::string& text);

}  // namespace trainsim::calibrate::testing
