#include "sim/report/atomic_file.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "sim/core/input_error.h"

namespace trainsim::report {

void write_file_atomically(const std::string& path, const std::string& key,
                           const std::function<void(std::ostream&)>& write) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    if (target.filename().empty()) {
        throw InputError(key + "=" + path + ": must name a file, not a directory");
    }
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        throw InputError(key + "=" + path + ": " +
                         (fs::exists(dir, ec) ? dir.string() + " is not a directory"
                                              : "directory " + dir.string() + " does not exist"));
    }
    const fs::path temp = dir / ("." + target.filename().string() + ".tmp." + std::to_string(::getpid()));
    {
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        if (!out) {
            throw InputError(key + "=" + path + ": cannot be written (no permission?)");
        }
        try {
            write(out);
        } catch (...) {
            out.close();
            fs::remove(temp, ec);
            throw;
        }
        out.flush();
        if (!out) {
            out.close();
            fs::remove(temp, ec);
            throw InputError(key + "=" + path + ": write failed (disk full?)");
        }
    }
    fs::rename(temp, target, ec);
    if (ec) {
        // Keep rename's reason ("Is a directory"): removing the temporary resets `ec`.
        const std::string reason = ec.message();
        fs::remove(temp, ec);
        throw InputError(key + "=" + path + ": cannot be written (" + reason + ")");
    }
}

}  // namespace trainsim::report
