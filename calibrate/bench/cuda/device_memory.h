// Owned CUDA resources: device memory, a stream, a pair of events timing work on a stream. Each frees
// what it holds on the device it was made on, so a throw while preparing a benchmark leaks nothing.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>

#include "calibrate/bench/cuda/cuda_check.h"

namespace trainsim::calibrate::cuda {

struct DeviceFree {
    void operator()(void* p) const noexcept { cudaFree(p); }
};

/// `bytes` of device memory on the current device.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
        void* p = nullptr;
        TRAINSIM_CUDA_CHECK(cudaMalloc(&p, bytes == 0 ? 1 : bytes));
        ptr_.reset(p);
    }
    [[nodiscard]] void* get() const { return ptr_.get(); }
    [[nodiscard]] std::size_t bytes() const { return bytes_; }

private:
    std::unique_ptr<void, DeviceFree> ptr_;
    std::size_t bytes_ = 0;
};

/// A non-blocking stream on the current device.
class Stream {
public:
    Stream() { TRAINSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    ~Stream() { cudaStreamDestroy(stream_); }
    [[nodiscard]] cudaStream_t get() const { return stream_; }

private:
    cudaStream_t stream_ = nullptr;
};

/// Events around work on one stream: the GPU's own clock, without the host's launch overhead.
class EventTimer {
public:
    EventTimer() {
        TRAINSIM_CUDA_CHECK(cudaEventCreate(&start_));
        TRAINSIM_CUDA_CHECK(cudaEventCreate(&stop_));
    }
    EventTimer(const EventTimer&) = delete;
    EventTimer& operator=(const EventTimer&) = delete;
    ~EventTimer() {
        cudaEventDestroy(start_);
        cudaEventDestroy(stop_);
    }
    void start(cudaStream_t s) { TRAINSIM_CUDA_CHECK(cudaEventRecord(start_, s)); }
    void stop(cudaStream_t s) { TRAINSIM_CUDA_CHECK(cudaEventRecord(stop_, s)); }
    /// Waits for the stop event; seconds between the two.
    [[nodiscard]] double seconds() {
        TRAINSIM_CUDA_CHECK(cudaEventSynchronize(stop_));
        float ms = 0.0F;
        TRAINSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
        return static_cast<double>(ms) * 1e-3;
    }

private:
    cudaEvent_t start_ = nullptr;
    cudaEvent_t stop_ = nullptr;
};

}  // namespace trainsim::calibrate::cuda
