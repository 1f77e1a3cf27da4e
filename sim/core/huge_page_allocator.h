// An allocator for the arrays that grow with a program's task count (tens of millions of entries for
// an unfolded 2240-GPU iteration): it asks the kernel to back them with transparent huge pages.
//
// The engine walks thousands of GPUs' task ranges at once, so with 4 KiB pages nearly every access to a
// multi-GB array also misses the TLB; with 2 MiB pages the whole program's pages fit in it. On the
// 530B --fold none run this cut the CPU time by about a quarter. Small arrays, and systems without
// THP, get ordinary memory.
#pragma once

#include <cstddef>
#include <limits>
#include <new>
#include <vector>

namespace trainsim {

/// Memory for `bytes`: 2 MiB-aligned and advised for huge pages when at least kHugePageThreshold.
[[nodiscard]] void* allocate_maybe_huge(std::size_t bytes);
/// Frees what allocate_maybe_huge(bytes) returned, with the same `bytes`.
void deallocate_maybe_huge(void* p, std::size_t bytes) noexcept;

template <typename T> struct HugePageAllocator {
    using value_type = T;
    HugePageAllocator() = default;
    template <typename U>
    HugePageAllocator(const HugePageAllocator<U>&) noexcept {}  // NOLINT: rebinding is implicit
    [[nodiscard]] T* allocate(std::size_t n) {
        if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) {
            throw std::bad_array_new_length();
        }
        return static_cast<T*>(allocate_maybe_huge(n * sizeof(T)));
    }
    void deallocate(T* p, std::size_t n) noexcept { deallocate_maybe_huge(p, n * sizeof(T)); }
    friend bool operator==(const HugePageAllocator&, const HugePageAllocator&) { return true; }
};

/// A vector of one entry per task (or per dependency).
template <typename T> using TaskVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace trainsim
