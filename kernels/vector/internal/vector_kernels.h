// Declarations of the vector kernels (function types in vector.h), defined in per-ISA libraries; only
// the ones for the target's CPU family exist in a given build. Also the exponential's constants, shared
// by every ISA so that all of them compute tsl_expf's approximation.
#ifndef TESSEL_KERNELS_VECTOR_INTERNAL_VECTOR_KERNELS_H_
#define TESSEL_KERNELS_VECTOR_INTERNAL_VECTOR_KERNELS_H_

#include <cstdint>

namespace tessel {
namespace vector_internal {

// tsl_expf (kernels/portable/tessel_portable.h): x clamped to [kExpLo, kExpHi], x = n ln2 + r with n
// rounded to nearest and ln2 split in two (kLn2Hi has few mantissa bits, so n * kLn2Hi is exact),
// e^r = 1 + r + r^2 (kExpC2 + r (kExpC3 + ...)), and 2^n built in the exponent bits.
inline constexpr float kExpHi = 88.3762626647949f;
inline constexpr float kExpLo = -87.3365447504019f;
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2Hi = 0.693359375f;
inline constexpr float kLn2Lo = -2.12194440e-4f;
inline constexpr float kExpC7 = 1.9875691500e-4f;
inline constexpr float kExpC6 = 1.3981999507e-3f;
inline constexpr float kExpC5 = 8.3334519073e-3f;
inline constexpr float kExpC4 = 4.1665795894e-2f;
inline constexpr float kExpC3 = 1.6666665459e-1f;
inline constexpr float kExpC2 = 5.0000001201e-1f;

}  // namespace vector_internal

#define TESSEL_DECLARE_F32_VECTOR_KERNELS(isa)                                                                \
  void tessel_f32_softmax__##isa(int64_t rows, int64_t n, const float* x, float* y);                        \
  void tessel_f32_rmsnorm__##isa(int64_t rows, int64_t n, const float* x, const float* gain, float eps,     \
                                 float* y);                                                                 \
  void tessel_f32_clamp__##isa(int64_t n, const float* x, float* y, float lo, float hi);                    \
  void tessel_f32_sigmoid__##isa(int64_t n, const float* x, float* y);                                      \
  void tessel_f32_silu__##isa(int64_t n, const float* x, float* y);                                         \
  void tessel_f32_hardswish__##isa(int64_t n, const float* x, float* y);                                    \
  void tessel_f32_vadd_minmax__##isa(int64_t n, const float* a, const float* b, float* y, float lo, float hi); \
  void tessel_f32_vmul_minmax__##isa(int64_t n, const float* a, const float* b, float* y, float lo, float hi);

TESSEL_DECLARE_F32_VECTOR_KERNELS(reference)
TESSEL_DECLARE_F32_VECTOR_KERNELS(autovec)
#if defined(__x86_64__)
TESSEL_DECLARE_F32_VECTOR_KERNELS(avx2)
TESSEL_DECLARE_F32_VECTOR_KERNELS(avx512)
#endif
#if defined(__aarch64__)
TESSEL_DECLARE_F32_VECTOR_KERNELS(neon)
TESSEL_DECLARE_F32_VECTOR_KERNELS(sve)
#endif

#undef TESSEL_DECLARE_F32_VECTOR_KERNELS

}  // namespace tessel

#endif  // TESSEL_KERNELS_VECTOR_INTERNAL_VECTOR_KERNELS_H_
