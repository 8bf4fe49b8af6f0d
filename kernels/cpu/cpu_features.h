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
  // How the decode GEMVs (Q4_0/Q8_0 Panel16, F16/BF16 rows) stream weights: how many linear streams
  // one call reads in lockstep (4 or 2; 1 for Panel16 too), and whether they prefetch ahead in
  // software. 4 streams with prefetch, except on AMD family 19h (Zen 4), where 2 streams without
  // prefetch read fastest. Random TinyLlama, 1 thread, GB/s of weights: Zen 4 Q4_0 17-20 (4 streams,
  // prefetch), 23-26 (4, none), 29-30 (2, none); F16 22 / 24-26 / 27; Q8_0 (no prefetch either way)
  // 22-25 / 26-27. On Zen 5 the prefetch gains ~10% and 4 streams beat 2.
  // TESSEL_STREAM_PREFETCH=0|1 and TESSEL_DECODE_STREAMS=1|2|4 in the environment override them.
  bool stream_prefetch = true;
  int decode_streams = 4;

  // Short description, e.g. "x86-64 avx2 fma f16c avx512f avx512bw avx512vl avx512dq avx512vnni".
  std::string ToString() const;
};

// Detected on first use (thread-safe) and never changes afterwards.
const CpuFeatures& GetCpuFeatures();

}  // namespace tessel

#endif  // TESSEL_KERNELS_CPU_CPU_FEATURES_H_
