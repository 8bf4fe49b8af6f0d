// Test support: counts the process's heap allocations by taking the C allocator's public names
// (malloc, calloc, realloc, memalign, aligned_alloc, posix_memalign, free) over glibc's internal ones,
// for shared libraries too. Link it (alwayslink) into a test that checks "no allocation per run";
// such a test cannot run under AddressSanitizer, which replaces the allocator itself (tag no_asan).
#ifndef TESSEL_SUPPORT_TESTING_ALLOCATION_COUNTER_H_
#define TESSEL_SUPPORT_TESTING_ALLOCATION_COUNTER_H_

namespace tessel::testing {

// Allocations since the process started.
long AllocationCount();

}  // namespace tessel::testing

#endif  // TESSEL_SUPPORT_TESTING_ALLOCATION_COUNTER_H_
