#include "support/memory.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define TESSEL_MEMORY_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSEL_MEMORY_ASAN 1
#endif
#endif

namespace tessel {
namespace {

size_t RoundUp(size_t bytes, size_t to) { return (std::max<size_t>(bytes, 1) + to - 1) / to * to; }

constexpr size_t kChunkBytes = size_t{8} << 20;
constexpr size_t kAlignment = 64;

// Buffers carved in order from chunks of 2 MiB pages; a chunk goes back to the kernel when its last
// buffer is freed. Allocation happens when models and sessions are created, never per inference.
class HugePagePool {
 public:
  static HugePagePool& Get() {
    static HugePagePool* pool = new HugePagePool;  // never destroyed: buffers may outlive static destructors
    return *pool;
  }

  void* Allocate(size_t bytes) {
    bytes = RoundUp(bytes, kAlignment);
    std::lock_guard<std::mutex> lock(mu_);
    if (chunks_.empty() || chunks_.back().size - chunks_.back().used < bytes) {
      Chunk c;
      c.size = std::max(kChunkBytes, RoundUp(bytes, kHugePageBytes));
      c.base = static_cast<uint8_t*>(MapHugePages(c.size));
      if (c.base == nullptr) return nullptr;
      chunks_.push_back(c);
    }
    Chunk& c = chunks_.back();
    void* p = c.base + c.used;
    c.used += bytes;
    ++c.live;
    sizes_[p] = bytes;
    live_bytes_ += bytes;
    return p;
  }

  size_t live_bytes() {
    std::lock_guard<std::mutex> lock(mu_);
    return live_bytes_;
  }

  // False when p is not the pool's.
  bool Free(void* p) {
    auto* b = static_cast<uint8_t*>(p);
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < chunks_.size(); ++i) {
      Chunk& c = chunks_[i];
      if (b < c.base || b >= c.base + c.size) continue;
      auto it = sizes_.find(p);
      if (it != sizes_.end()) {
        live_bytes_ -= it->second;
        sizes_.erase(it);
      }
      if (--c.live == 0) {
        UnmapHugePages(c.base, c.size);
        chunks_.erase(chunks_.begin() + static_cast<std::ptrdiff_t>(i));
      }
      return true;
    }
    return false;
  }

 private:
  struct Chunk {
    uint8_t* base = nullptr;
    size_t size = 0, used = 0;
    int64_t live = 0;  // buffers not yet freed
  };
  std::mutex mu_;
  std::vector<Chunk> chunks_;  // new buffers come from the last
  std::unordered_map<void*, size_t> sizes_;  // live buffers' sizes
  size_t live_bytes_ = 0;
};

}  // namespace

void* MapHugePages(size_t bytes) {
  const size_t len = RoundUp(bytes, kHugePageBytes);
  // Map a page more than needed and trim both ends to a 2 MiB boundary.
  void* region = ::mmap(nullptr, len + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED) return nullptr;
  auto* start = static_cast<uint8_t*>(region);
  auto* data = reinterpret_cast<uint8_t*>(RoundUp(reinterpret_cast<uintptr_t>(start), kHugePageBytes));
  if (data > start) ::munmap(start, data - start);
  const size_t tail = start + len + kHugePageBytes - (data + len);
  if (tail > 0) ::munmap(data + len, tail);
  ::madvise(data, len, MADV_HUGEPAGE);
  return data;
}

void UnmapHugePages(void* p, size_t bytes) {
  if (p != nullptr) ::munmap(p, RoundUp(bytes, kHugePageBytes));
}

namespace {

// The pool's memory is zero already: it comes from fresh anonymous mappings and is never handed out
// twice (a chunk goes back to the kernel whole), so `zeroed` only fills the heap's. Not writing pool
// memory leaves its pages untouched until the buffer's owner writes them, once.
void* Allocate(size_t bytes, bool zeroed) {
#if !defined(TESSEL_MEMORY_ASAN)
  if (bytes >= kPooledMinBytes) {
    if (void* p = HugePagePool::Get().Allocate(bytes)) return p;
  }
#endif
  const size_t rounded = RoundUp(bytes, kAlignment);
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (zeroed && p != nullptr) std::memset(p, 0, rounded);
  return p;
}

}  // namespace

void* AllocateBuffer(size_t bytes) { return Allocate(bytes, /*zeroed=*/false); }

void* AllocateZeroedBuffer(size_t bytes) { return Allocate(bytes, /*zeroed=*/true); }

long long HugePageBackedBytes() {
  std::FILE* f = std::fopen("/proc/self/smaps_rollup", "r");
  if (f == nullptr) return -1;
  char line[256];
  long long kb = -1;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::sscanf(line, "AnonHugePages: %lld kB", &kb) == 1) break;
  }
  std::fclose(f);
  return kb < 0 ? -1 : kb * 1024;
}

size_t PooledBytes() {
#if defined(TESSEL_MEMORY_ASAN)
  return 0;
#else
  return HugePagePool::Get().live_bytes();
#endif
}

void FreeBuffer(void* p) {
  if (p == nullptr) return;
#if !defined(TESSEL_MEMORY_ASAN)
  if (HugePagePool::Get().Free(p)) return;
#endif
  std::free(p);
}

}  // namespace tessel
