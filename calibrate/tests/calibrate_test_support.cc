#include "calibrate/tests/calibrate_test_support.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "calibrate/measure/source_id.h"

namespace trainsim::calibrate::testing {

namespace fs = std::filesystem;

TempDir::TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::string name =
        info != nullptr ? std::string(info->test_suite_name()) + "_" + info->name() : "calibrate";
    static int count = 0;  // several per test (a command's scratch space beside the test's own)
    dir_ = fs::temp_directory_path() /
           ("trainsim_calibrate_" + name + "_" + std::to_string(::getpid()) + "_" + std::to_string(count++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
}

TempDir::~TempDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
}

CommandResult run_command(const std::string& command_line, const std::string& cwd) {
    const TempDir scratch;
    const std::string out = scratch.path("stdout");
    const std::string err = scratch.path("stderr");
    const std::string full = "cd '" + cwd + "' && " + command_line + " >'" + out + "' 2>'" + err + "'";
    const int raw = std::system(full.c_str());
    CommandResult r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = read_text_file(out);
    r.err = read_text_file(err);
    return r;
}

CommandResult calibrate(const std::string& args) {
    return run_command(std::string("'") + TRAINSIM_CALIBRATE_BINARY + "' " + args);
}

CommandResult trainsim(const std::string& args) {
    return run_command(std::string("'") + TRAINSIM_BINARY + "' " + args);
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

}  // namespace trainsim::calibrate::testing
