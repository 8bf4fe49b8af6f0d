// Memory for long-lived buffers (packed weights, arenas, tensors) and 2 MiB pages.
//
// A compiled CNN streams most of its weights from L3 or DRAM every run (MobileNetV2: 14 MB of them,
// more than the L2 TLB covers in 4 KiB pages), so they are laid out on 2 MiB pages where the kernel
// gives them (transparent huge pages in "madvise" mode, Debian's default): MobileNetV2's 5 MB
// classifier 0.159 -> 0.123 ms per run and the model ~60 us faster on Zen 4 (per-op mins, interleaved),
// gemm_benchmark's cold mbv2_fc GEMV 0.185 -> 0.153 ms. Buffers of at least kPooledMinBytes are carved
// one after another from 8 MiB chunks of such pages (HugePagePool), so that rounding each up to a whole
// page wastes no memory; a chunk is unmapped when its last buffer is freed. Smaller buffers, and every
// buffer under AddressSanitizer (whose red zones need the heap), come from aligned_alloc.
#ifndef TESSEL_SUPPORT_MEMORY_H_
#define TESSEL_SUPPORT_MEMORY_H_

#include <cstddef>

namespace tessel {

constexpr size_t kHugePageBytes = size_t{2} << 20;
constexpr size_t kPooledMinBytes = size_t{64} << 10;

// `bytes` (rounded up to whole 2 MiB pages) of zeroed anonymous memory, 2 MiB aligned, advised
// MADV_HUGEPAGE (best effort); null when the mapping fails. Release with UnmapHugePages(p, bytes).
void* MapHugePages(size_t bytes);
void UnmapHugePages(void* p, size_t bytes);

// `bytes` of 64-byte aligned memory, not zeroed; null when out of memory. Release with FreeBuffer.
void* AllocateBuffer(size_t bytes);
// The same, zero-filled. Large buffers come zeroed from fresh 2 MiB pages and are not written here.
void* AllocateZeroedBuffer(size_t bytes);
void FreeBuffer(void* p);

// Bytes of the buffers AllocateBuffer has placed on 2 MiB pages and not yet freed.
size_t PooledBytes();

// Bytes of this process's anonymous memory the kernel backs with 2 MiB pages (AnonHugePages in
// /proc/self/smaps_rollup), or -1 where that is not readable.
long long HugePageBackedBytes();

}  // namespace tessel

#endif  // TESSEL_SUPPORT_MEMORY_H_
