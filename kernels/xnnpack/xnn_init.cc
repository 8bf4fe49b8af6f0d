#include "kernels/xnnpack/xnn_init.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "kernels/registry/registry.h"
#include "support/memory.h"
#include "xnnpack.h"

namespace tessel {
namespace {

void* Allocate(void*, size_t size) { return std::malloc(size); }
void* Reallocate(void*, void* p, size_t size) { return std::realloc(p, size); }
void Deallocate(void*, void* p) { std::free(p); }

// XNNPACK's SIMD memory (packed weights, buffers): 64-byte aligned from AllocateBuffer; a larger
// alignment (none on the targets Tessel builds for) from aligned_alloc, which FreeBuffer also frees.
void* AlignedAllocate(void*, size_t alignment, size_t size) {
  if (alignment <= 64) return AllocateBuffer(size);
  return std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
}
void AlignedDeallocate(void*, void* p) { FreeBuffer(p); }

const xnn_allocator kAllocator = {nullptr, Allocate, Reallocate, Deallocate, AlignedAllocate, AlignedDeallocate};

}  // namespace

absl::Status InitXnnpack() {
  static const xnn_status status = xnn_initialize(&kAllocator);
  if (status == xnn_status_success) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat("XNNPACK cannot initialize on this CPU (status ", static_cast<int>(status),
                                             "); set TESSEL_FORCE_BACKEND=reference"));
}

bool XnnpackF32GemmIsSlow() {
#if defined(__x86_64__)
  return CpuSupports(Isa::kAvx2) && !CpuSupports(Isa::kAvx512);
#else
  return false;
#endif
}

}  // namespace tessel
