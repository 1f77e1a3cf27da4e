#include "calibrate/bench/cuda/process_group.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <thread>

namespace trainsim::calibrate::cuda {

namespace {

std::optional<int> env_int(const char* name) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') {
        return std::nullopt;
    }
    char* end = nullptr;
    const long i = std::strtol(v, &end, 10);
    if (*end != '\0') {
        return std::nullopt;
    }
    return static_cast<int>(i);
}

}  // namespace

ProcessRank process_rank_from_environment() {
    // (rank, world size, local rank) variables of Open MPI, MPICH/PMI and Slurm, in that order.
    const char* sets[][3] = {{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
                             {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
                             {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"}};
    for (const auto& s : sets) {
        const auto rank = env_int(s[0]);
        const auto world = env_int(s[1]);
        if (rank && world && *world > 1) {
            return {*rank, *world, env_int(s[2]).value_or(0)};
        }
    }
    return {};
}

std::string exchange_through_file(const ProcessRank& me, const std::string& path, const std::string& bytes,
                                  double timeout_s) {
    namespace fs = std::filesystem;
    if (me.rank == 0) {
        const std::string temp = path + ".tmp";
        {
            std::ofstream out(temp, std::ios::binary | std::ios::trunc);
            out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
            if (!out) {
                throw std::runtime_error("cannot write the bootstrap file " + temp);
            }
        }
        fs::rename(temp, path);
        return bytes;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
        std::error_code ec;
        if (fs::is_regular_file(path, ec) && fs::file_size(path, ec) == bytes.size()) {
            std::ifstream in(path, std::ios::binary);
            std::string read((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            if (read.size() == bytes.size()) {
                return read;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    throw std::runtime_error("rank " + std::to_string(me.rank) + ": no bootstrap file " + path +
                             " from rank 0");
}

}  // namespace trainsim::calibrate::cuda
