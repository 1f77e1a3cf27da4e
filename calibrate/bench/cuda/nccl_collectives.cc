#include "calibrate/bench/cuda/nccl_collectives.h"

#include <nccl.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <stdexcept>

#include "calibrate/bench/cuda/device_memory.h"
#include "calibrate/bench/cuda/memory_kernels.h"

namespace trainsim::calibrate::cuda {

namespace {

constexpr std::int64_t kBf16Bytes = 2;
// NCCL connects peers lazily, on a communicator's first collectives: run a few before timing.
constexpr int kWarmupCalls = 5;
constexpr double kBootstrapTimeoutSeconds = 120.0;

ncclComm_t as_comm(void* c) {
    return static_cast<ncclComm_t>(c);
}

// One rank's buffers, stream and timer, on its device.
struct RankState {
    int device = 0;
    int rank = 0;
    ncclComm_t comm = nullptr;
    DeviceBuffer send;
    DeviceBuffer recv;
    Stream stream;
    EventTimer timer;

    RankState(int dev, int r, ncclComm_t c, std::size_t send_bytes, std::size_t recv_bytes)
        : device(dev), rank(r), comm(c), send(send_bytes), recv(recv_bytes) {}
};

class NcclOp : public TimedOp {
public:
    NcclOp(const CollectiveCase& c, const std::vector<int>& devices, const std::vector<int>& ranks,
           const std::vector<void*>& comms)
        : c_(c), count_(c.bytes / kBf16Bytes) {
        if (c.bytes % (kBf16Bytes * c.ranks) != 0) {
            throw std::invalid_argument("collective bytes must be whole bf16 chunks per rank");
        }
        const auto full = static_cast<std::size_t>(c.bytes);
        const auto part = static_cast<std::size_t>(c.bytes / c.ranks);
        const std::size_t send = c.op == cost::CollectiveKind::AllGather ? part : full;
        const std::size_t recv = c.op == cost::CollectiveKind::ReduceScatter ? part : full;
        for (std::size_t i = 0; i < devices.size(); ++i) {
            TRAINSIM_CUDA_CHECK(cudaSetDevice(devices[i]));
            ranks_.push_back(
                std::make_unique<RankState>(devices[i], ranks[i], as_comm(comms[i]), send, recv));
            RankState& r = *ranks_.back();
            fill_bf16(r.send.get(), static_cast<std::int64_t>(send) / kBf16Bytes, 1.0F, 21 + i,
                      r.stream.get());
        }
        for (int w = 0; w < kWarmupCalls; ++w) {
            issue();
        }
        synchronize();
    }

    double seconds_per_call(int calls) override {
        for (auto& r : ranks_) {
            TRAINSIM_CUDA_CHECK(cudaSetDevice(r->device));
            r->timer.start(r->stream.get());
        }
        for (int call = 0; call < calls; ++call) {
            issue();
        }
        double slowest = 0.0;
        for (auto& r : ranks_) {
            TRAINSIM_CUDA_CHECK(cudaSetDevice(r->device));
            r->timer.stop(r->stream.get());
        }
        for (auto& r : ranks_) {
            TRAINSIM_CUDA_CHECK(cudaSetDevice(r->device));
            slowest = std::max(slowest, r->timer.seconds());
        }
        return slowest / calls;
    }

private:
    // One collective on every local rank, grouped as NCCL requires when one thread drives several GPUs.
    void issue() {
        TRAINSIM_CUDA_CHECK(ncclGroupStart());
        const std::size_t n = static_cast<std::size_t>(c_.ranks);
        const auto count = static_cast<std::size_t>(count_);
        for (auto& r : ranks_) {
            const cudaStream_t s = r->stream.get();
            switch (c_.op) {
            case cost::CollectiveKind::AllReduce:
                TRAINSIM_CUDA_CHECK(
                    ncclAllReduce(r->send.get(), r->recv.get(), count, ncclBfloat16, ncclSum, r->comm, s));
                break;
            case cost::CollectiveKind::AllGather:
                TRAINSIM_CUDA_CHECK(
                    ncclAllGather(r->send.get(), r->recv.get(), count / n, ncclBfloat16, r->comm, s));
                break;
            case cost::CollectiveKind::ReduceScatter:
                TRAINSIM_CUDA_CHECK(ncclReduceScatter(r->send.get(), r->recv.get(), count / n, ncclBfloat16,
                                                      ncclSum, r->comm, s));
                break;
            case cost::CollectiveKind::SendRecv: {
                // A ring, as nccl-tests' sendrecv: every rank sends to the next and receives from the
                // previous.
                const int next = (r->rank + 1) % c_.ranks;
                const int previous = (r->rank + c_.ranks - 1) % c_.ranks;
                TRAINSIM_CUDA_CHECK(ncclSend(r->send.get(), count, ncclBfloat16, next, r->comm, s));
                TRAINSIM_CUDA_CHECK(ncclRecv(r->recv.get(), count, ncclBfloat16, previous, r->comm, s));
                break;
            }
            case cost::CollectiveKind::AllToAll: {
                // As nccl-tests' alltoall: chunk q of every rank's buffer goes to rank q, one grouped
                // send and receive per peer.
                const std::size_t chunk_bytes = count / n * kBf16Bytes;
                for (int q = 0; q < c_.ranks; ++q) {
                    const std::size_t offset = static_cast<std::size_t>(q) * chunk_bytes;
                    TRAINSIM_CUDA_CHECK(ncclSend(static_cast<char*>(r->send.get()) + offset, count / n,
                                                 ncclBfloat16, q, r->comm, s));
                    TRAINSIM_CUDA_CHECK(ncclRecv(static_cast<char*>(r->recv.get()) + offset, count / n,
                                                 ncclBfloat16, q, r->comm, s));
                }
                break;
            }
            }
        }
        TRAINSIM_CUDA_CHECK(ncclGroupEnd());
    }

    void synchronize() {
        for (auto& r : ranks_) {
            TRAINSIM_CUDA_CHECK(cudaSetDevice(r->device));
            TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(r->stream.get()));
        }
    }

    CollectiveCase c_;
    std::int64_t count_;
    std::vector<std::unique_ptr<RankState>> ranks_;
};

}  // namespace

NcclGroups::NcclGroups(int devices) : devices_(devices) {}

NcclGroups::NcclGroups(const ProcessRank& me, const std::string& bootstrap_file) : devices_(1), process_(me) {
    if (bootstrap_file.empty()) {
        throw std::invalid_argument("a run of " + std::to_string(me.world) +
                                    " processes needs --bootstrap-file on a filesystem every node sees");
    }
    TRAINSIM_CUDA_CHECK(cudaSetDevice(me.local_rank));
    ncclUniqueId id{};
    if (me.rank == 0) {
        TRAINSIM_CUDA_CHECK(ncclGetUniqueId(&id));
    }
    const std::string mine(reinterpret_cast<const char*>(&id), sizeof(id));
    const std::string shared = exchange_through_file(me, bootstrap_file, mine, kBootstrapTimeoutSeconds);
    std::memcpy(&id, shared.data(), sizeof(id));
    ncclComm_t comm = nullptr;
    TRAINSIM_CUDA_CHECK(ncclCommInitRank(&comm, me.world, id, me.rank));
    comms_[me.world] = {comm};
    if (me.rank == 0) {
        std::error_code ec;  // every rank has joined, so every rank has read it
        std::filesystem::remove(bootstrap_file, ec);
    }
}

NcclGroups::~NcclGroups() {
    for (auto& [ranks, comms] : comms_) {
        for (void* c : comms) {
            ncclCommDestroy(as_comm(c));
        }
    }
}

const std::vector<void*>& NcclGroups::local_comms(int ranks) {
    auto it = comms_.find(ranks);
    if (it == comms_.end()) {
        std::vector<int> devices(static_cast<std::size_t>(ranks));
        std::iota(devices.begin(), devices.end(), 0);
        std::vector<ncclComm_t> comms(static_cast<std::size_t>(ranks));
        TRAINSIM_CUDA_CHECK(ncclCommInitAll(comms.data(), ranks, devices.data()));
        it = comms_.emplace(ranks, std::vector<void*>(comms.begin(), comms.end())).first;
    }
    return it->second;
}

std::unique_ptr<TimedOp> NcclGroups::collective(const CollectiveCase& c) {
    if (multi_process()) {
        if (c.ranks != process_.world) {
            throw std::invalid_argument("across processes only the group of all " +
                                        std::to_string(process_.world) + " ranks is measured");
        }
        return std::make_unique<NcclOp>(c, std::vector<int>{process_.local_rank},
                                        std::vector<int>{process_.rank}, comms_.at(process_.world));
    }
    if (c.ranks > devices_) {
        throw std::invalid_argument(std::to_string(c.ranks) + " ranks but " + std::to_string(devices_) +
                                    " GPUs");
    }
    std::vector<int> devices(static_cast<std::size_t>(c.ranks));
    std::iota(devices.begin(), devices.end(), 0);
    return std::make_unique<NcclOp>(c, devices, devices, local_comms(c.ranks));
}

}  // namespace trainsim::calibrate::cuda
