// A heap array of T on 64-byte (cache line) boundaries, for kernel scratch that vector code streams
// through. std::vector's allocation is only 16-byte aligned (a large one sits 16 bytes past a page
// start), so every 64-byte zmm access of it straddles two cache lines: the fused depthwise kernel ran
// 1.3-1.5x slower on such buffers (Zen 4). Elements are value-initialized (zero for arithmetic T).
#ifndef TESSEL_KERNELS_CPU_ALIGNED_BUFFER_H_
#define TESSEL_KERNELS_CPU_ALIGNED_BUFFER_H_

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace tessel {

template <typename T>
class AlignedBuffer {
  static_assert(std::is_trivially_copyable<T>::value && alignof(T) <= 64, "plain data only");

 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t n) : size_(n) {
    if (n == 0) return;
    // aligned_alloc wants a multiple of the alignment.
    void* p = std::aligned_alloc(64, (n * sizeof(T) + 63) / 64 * 64);
    if (p == nullptr) throw std::bad_alloc();
    data_.reset(static_cast<T*>(p));
    for (size_t i = 0; i < n; ++i) data_.get()[i] = T();
  }
  AlignedBuffer(AlignedBuffer&& o) noexcept : data_(std::move(o.data_)), size_(std::exchange(o.size_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    data_ = std::move(o.data_);
    size_ = std::exchange(o.size_, 0);
    return *this;
  }

  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  size_t size() const { return size_; }
  T& operator[](size_t i) { return data_.get()[i]; }
  const T& operator[](size_t i) const { return data_.get()[i]; }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> data_;
  size_t size_ = 0;
};

}  // namespace tessel

#endif  // TESSEL_KERNELS_CPU_ALIGNED_BUFFER_H_
