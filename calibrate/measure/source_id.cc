#include "calibrate/measure/source_id.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/core/input_error.h"

namespace trainsim::calibrate {

namespace fs = std::filesystem;

std::string source_id_for_path(const std::string& path) {
    std::string id = "S-DATA";
    bool dash = true;  // "S-DATA" is followed by a dash before the first word
    for (const char c : fs::path(path).stem().string()) {
        if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
            if (dash) {
                id += '-';
                dash = false;
            }
            id += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        } else {
            dash = true;
        }
    }
    return id;
}

std::string display_path(const std::string& path) {
    std::error_code ec;
    const fs::path absolute = fs::weakly_canonical(fs::absolute(path, ec), ec);
    const fs::path cwd = fs::current_path(ec);
    if (!ec) {
        const fs::path relative = absolute.lexically_relative(cwd);
        if (!relative.empty() && *relative.begin() != "..") {
            return relative.generic_string();
        }
    }
    return path;
}

std::string read_text_file(const std::string& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        throw InputError(path + ": is a directory, not a file");
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw InputError(path + ": cannot be read (no such file?)");
    }
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace trainsim::calibrate
