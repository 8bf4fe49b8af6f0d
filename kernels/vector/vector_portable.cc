// The portable vector kernels: the auto-vectorized C of kernels/portable behind the vector.h function
// types. Those C kernels work in place and have no fused clamp, so an out-of-place call copies first
// and vadd/vmul clamp in a second pass (what the cost model charges them for). Calling them in place
// (y == x) breaks their restrict promise only in name: each element is read before the one store that
// depends on it, so no reordering can observe the aliasing.
#include <cmath>
#include <cstring>

#include "kernels/portable/tessel_portable.h"
#include "kernels/vector/internal/vector_kernels.h"

namespace tessel {
namespace {

// y = x, so that an in-place C kernel can then run on y.
void CopyUnlessSame(int64_t n, const float* x, float* y) {
  if (x != y && n > 0) std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float));
}

bool IsIdentityClamp(float lo, float hi) { return std::isinf(lo) && lo < 0 && std::isinf(hi) && hi > 0; }

}  // namespace

void tessel_f32_softmax__autovec(int64_t rows, int64_t n, const float* x, float* y) {
  tsl_f32_softmax__autovec(static_cast<size_t>(rows), static_cast<size_t>(n), x, y);
}

void tessel_f32_rmsnorm__autovec(int64_t rows, int64_t n, const float* x, const float* gain, float eps, float* y) {
  tsl_f32_rmsnorm__autovec(static_cast<size_t>(rows), static_cast<size_t>(n), x, gain, eps, y);
}

void tessel_f32_clamp__autovec(int64_t n, const float* x, float* y, float lo, float hi) {
  CopyUnlessSame(n, x, y);
  tsl_f32_clamp__autovec(static_cast<size_t>(n), y, lo, hi);
}

void tessel_f32_sigmoid__autovec(int64_t n, const float* x, float* y) {
  CopyUnlessSame(n, x, y);
  tsl_f32_sigmoid__autovec(static_cast<size_t>(n), y);
}

void tessel_f32_silu__autovec(int64_t n, const float* x, float* y) {
  CopyUnlessSame(n, x, y);
  tsl_f32_silu__autovec(static_cast<size_t>(n), y);
}

void tessel_f32_hardswish__autovec(int64_t n, const float* x, float* y) {
  CopyUnlessSame(n, x, y);
  tsl_f32_hardswish__autovec(static_cast<size_t>(n), y);
}

void tessel_f32_vadd_minmax__autovec(int64_t n, const float* a, const float* b, float* y, float lo, float hi) {
  tsl_f32_vadd__autovec(static_cast<size_t>(n), a, b, y);
  if (!IsIdentityClamp(lo, hi)) tsl_f32_clamp__autovec(static_cast<size_t>(n), y, lo, hi);
}

void tessel_f32_vmul_minmax__autovec(int64_t n, const float* a, const float* b, float* y, float lo, float hi) {
  tsl_f32_vmul__autovec(static_cast<size_t>(n), a, b, y);
  if (!IsIdentityClamp(lo, hi)) tsl_f32_clamp__autovec(static_cast<size_t>(n), y, lo, hi);
}

}  // namespace tessel
