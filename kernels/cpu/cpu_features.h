// What the CPU we run on can do, detected once: x86 AVX2/FMA/AVX-512 (F, BW, VL, DQ, VNNI) and Arm
// NEON, dotprod, i8mm, SVE/SVE2 with the SVE vector length. Kernel selection reads only this.
#ifndef TESSEL_KERNELS_CPU_CPU_FEATURES_H_
#define TESSEL_KERNELS_CPU_CPU_FEATURES_H_

#include <string>

namespace tessel {

struct CpuFeatures {
  // x86-64. avx512 kernels need F+BW+VL+DQ and OS support for the ZMM state (XCR0).
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512vnni = false;
  // aarch64.
  bool neon = false;
  bool dotprod = false;
  bool i8mm = false;
  bool sve = false;
  bool sve2 = false;
  int sve_vector_bits = 0;  // 0 without SVE
  // Whether the streaming decode GEMVs (Q4_0 Panel16, F16/BF16 rows) prefetch ahead in software. On,
  // except on AMD family 19h (Zen 4), where the prefetches slow the streams down: random TinyLlama
  // Q4_0, 1 thread, 17-21 GB/s with them against 26-28 without (on Zen 5 they gain ~10%).
  // TESSEL_STREAM_PREFETCH=0 or 1 in the environment overrides the choice.
  bool stream_prefetch = true;

  // Short description, e.g. "x86-64 avx2 fma f16c avx512f avx512bw avx512vl avx512dq avx512vnni".
  std::string ToString() const;
};

// Detected on first use (thread-safe) and never changes afterwards.
const CpuFeatures& GetCpuFeatures();

}  // namespace tessel

#endif  // TESSEL_KERNELS_CPU_CPU_FEATURES_H_
