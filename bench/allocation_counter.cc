// Replaces the global operator new/delete of the benchmark binary (only of it: the trainsim executable
// and tests keep the library's) with counting wrappers around malloc. Live bytes use
// malloc_usable_size, so that sized and unsized deletes count the same.
#include "bench/allocation_counter.h"

#include <atomic>
#include <cstdlib>
#include <malloc.h>
#include <new>

namespace {

std::atomic<std::uint64_t> g_allocations{0};
std::atomic<std::int64_t> g_live{0};
std::atomic<std::int64_t> g_peak{0};

void count(void* p) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    const std::int64_t live =
        g_live.fetch_add(static_cast<std::int64_t>(malloc_usable_size(p)), std::memory_order_relaxed) +
        static_cast<std::int64_t>(malloc_usable_size(p));
    std::int64_t peak = g_peak.load(std::memory_order_relaxed);
    while (live > peak && !g_peak.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
    }
}

void* counted_allocate(std::size_t size) {
    void* p = std::malloc(size == 0 ? 1 : size);
    if (p == nullptr) {
        throw std::bad_alloc();
    }
    count(p);
    return p;
}

// The aligned forms (the huge-page arrays of sim/core/huge_page_allocator.h use them).
void* counted_allocate(std::size_t size, std::align_val_t alignment) {
    const auto a = static_cast<std::size_t>(alignment);
    void* p = std::aligned_alloc(a, ((size == 0 ? 1 : size) + a - 1) / a * a);  // a multiple of a
    if (p == nullptr) {
        throw std::bad_alloc();
    }
    count(p);
    return p;
}

void counted_free(void* p) {
    if (p != nullptr) {
        g_live.fetch_sub(static_cast<std::int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
        std::free(p);
    }
}

}  // namespace

void* operator new(std::size_t size) {
    return counted_allocate(size);
}
void* operator new[](std::size_t size) {
    return counted_allocate(size);
}
void operator delete(void* p) noexcept {
    counted_free(p);
}
void operator delete[](void* p) noexcept {
    counted_free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    counted_free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    counted_free(p);
}
void* operator new(std::size_t size, std::align_val_t alignment) {
    return counted_allocate(size, alignment);
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
    return counted_allocate(size, alignment);
}
void operator delete(void* p, std::align_val_t) noexcept {
    counted_free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
    counted_free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
    counted_free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
    counted_free(p);
}

namespace trainsim::bench {

AllocationStats allocation_stats() {
    return {g_allocations.load(), g_live.load(), g_peak.load()};
}

void reset_allocation_stats() {
    g_allocations.store(0);
    g_peak.store(g_live.load());
}

}  // namespace trainsim::bench
