#include "sim/core/huge_page_allocator.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace trainsim {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
// Below this an array gains little and would round up to a 2 MiB multiple.
constexpr std::size_t kHugePageThreshold = std::size_t{8} << 20;

std::size_t rounded(std::size_t bytes) {
    return (bytes + kHugePage - 1) / kHugePage * kHugePage;
}

}  // namespace

void* allocate_maybe_huge(std::size_t bytes) {
    if (bytes < kHugePageThreshold) {
        return ::operator new(bytes);
    }
    // Through the aligned operator new, so that allocation counters (bench/) see it.
    void* p = ::operator new (rounded(bytes), std::align_val_t{kHugePage});
#if defined(MADV_HUGEPAGE)
    // Advice only: where THP is off or unavailable this fails and the pages are ordinary ones.
    (void)::madvise(p, rounded(bytes), MADV_HUGEPAGE);
#endif
    return p;
}

void deallocate_maybe_huge(void* p, std::size_t bytes) noexcept {
    if (bytes < kHugePageThreshold) {
        ::operator delete(p);
        return;
    }
    ::operator delete (p, std::align_val_t{kHugePage});
}

}  // namespace trainsim
