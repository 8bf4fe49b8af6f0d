// The global operator new of Tessel's executables (the tessel command): allocations of 4 MiB and more
// get transparent huge pages.
//
// Compiling a model copies its weights several times through std::string and std::vector: the file's
// bytes, protobuf's raw_data fields, the artifact's weights section. Each copy lands in fresh memory,
// and on 4 KiB pages every page is a fault: under KVM one cost ~30 us on Zen 5 (2026-11-28), and
// `tessel compile` of ResNet-18 (45 MB of weights) took 1.4 s, 0.4 s with this. The pages of such a
// block that fall on 2 MiB boundaries are advised MADV_HUGEPAGE before anything touches them (THP in
// "madvise" mode, Debian's default; a no-op where THP is off). The memory is still malloc's: the
// default operator delete frees it. A library must not replace operator new, so only binaries link this;
// AddressSanitizer builds keep the sanitizer's own.
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>

#include "support/memory.h"

#if defined(__SANITIZE_ADDRESS__)
#define TESSEL_HUGE_NEW_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSEL_HUGE_NEW_ASAN 1
#endif
#endif

#if !defined(TESSEL_HUGE_NEW_ASAN)
namespace {

constexpr size_t kAdviseMinBytes = size_t{4} << 20;

void AdviseHugePages(void* p, size_t bytes) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p);
  const uintptr_t first = (begin + tessel::kHugePageBytes - 1) & ~(tessel::kHugePageBytes - 1);
  const uintptr_t last = (begin + bytes) & ~(tessel::kHugePageBytes - 1);
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

void* Allocate(size_t bytes) {
  void* p = std::malloc(bytes == 0 ? 1 : bytes);
  if (p == nullptr) throw std::bad_alloc();
  if (bytes >= kAdviseMinBytes) AdviseHugePages(p, bytes);
  return p;
}

}  // namespace

void* operator new(size_t bytes) { return Allocate(bytes); }
void* operator new[](size_t bytes) { return Allocate(bytes); }
#endif
