#include "tests/test_support.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace trainsim::testing {

namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

CommandResult run_trainsim(const std::string& args) {
    static int counter = 0;
    const std::string base = "/tmp/trainsim_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    const std::string command =
        std::string(TRAINSIM_BINARY) + " " + args + " > " + base + ".out 2> " + base + ".err";
    const int raw = std::system(command.c_str());
    CommandResult r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = slurp(base + ".out");
    r.err = slurp(base + ".err");
    std::remove((base + ".out").c_str());
    std::remove((base + ".err").c_str());
    return r;
}

}  // namespace trainsim::testing
