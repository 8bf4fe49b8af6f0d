// What the CPU we run on can do, detected once: x86 AVX2/FMA/AVX-512 (F, BW, VL, DQ, VNNI), AVX-VNNI, GFNI
// and Arm NEON, dotprod, i8mm, SVE/SVE2 with the SVE vector length. Kernel selection reads only this, so
// TESSEL_MAX_ISA (below) caps what every kernel choice sees.
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
  // VEX-encoded vpdpbusd on ymm (Alder Lake, Sapphire Rapids, Zen 5): the avxvnni Panel16 kernels.
  bool avx_vnni = false;
  // GF(2^8) affine byte transforms (vgf2p8affineqb, ZMM form): the INT3 decode kernel rebuilds codes
  // with them. TESSEL_GFNI=0 in the environment turns it off (TESSEL_MAX_ISA caps every level).
  bool gfni = false;
  // aarch64.
  bool neon = false;
  bool dotprod = false;
  bool i8mm = false;
  bool sve = false;
  bool sve2 = false;
  // SVE's int8 matrix multiply (USMMLA on SVE vectors; HWCAP2_SVEI8MM): Neoverse V1 and later.
  bool sve_i8mm = false;
  int sve_vector_bits = 0;  // 0 without SVE
  // How the decode GEMVs stream weights: how many linear streams one call reads in lockstep, and
  // whether they prefetch ahead in software.
  // - decode_streams: the Q4_0/Q8_0 Panel16 kernels (4, 2 or 1). 4 with prefetch, except on AMD
  //   family 19h (Zen 4), where 2 streams without prefetch read fastest. Random TinyLlama, 1 thread,
  //   GB/s of weights on Zen 4: Q4_0 17-20 (4 streams, prefetch), 23-26 (4, none), 29-30 (2, none);
  //   Q8_0 (no prefetch either way) 22-25 (4) / 26-27 (2). On Zen 5 the prefetch gains ~10% and 4
  //   streams beat 2.
  // - decode_streams_ymm: the same for the 256-bit (AVX2, AVX-VNNI) Panel16 kernels, which issue about
  //   twice the instructions per byte: 4 on Zen 4 (what runs there under TESSEL_MAX_ISA=avx2), where
  //   2 streams left them short of requests in flight (Q4_0 18.7-20.0 GB/s with 2, 24.5-25.7 with 4;
  //   on one L3-resident layer 19 vs 34 GB/s), 2 on Zen 3, where 2 streams read 89-95% of bandwidth.
  //   The k-quant and group kernels read as many (with stream_prefetch_l2 on Zen 4, 2 and 4 streams
  //   are within noise of each other for Q4_K and Q5_K, and 4 read Q6_K 10% faster).
  // - row_streams / row_streams_threaded: the F16/BF16 row-dot kernels on one thread / on each of
  //   several threads sharing a matrix (4 or 2). Zen 4, F16, no prefetch: 1 thread 27.4-29.1 GB/s
  //   with 4 streams, 24.8-26.7 with 2; 2 threads, 4 per thread faster in 8 of 10 paired runs. Zen 5
  //   measured 2 per thread fastest on 2 threads.
  // - stream_prefetch: both kinds' software prefetch into L1 (off on Zen 4: F16 22.5-23.7 GB/s with it).
  // - stream_prefetch_l2: the 256-bit k-quant and group kernels prefetch each stream one 256-column
  //   unit ahead into L2 (prefetcht1) instead, whatever stream_prefetch says: AMD family 19h. Zen 4,
  //   AVX2 level, TinyLlama's matrices, 1 thread, GB/s without -> with: Q4_K 18.4-19.1 -> 27.3,
  //   Q6_K 16.1-17.2 -> 26.8-28.6, Q2_K 11-12 -> 17; the same prefetch into L1 ran slower than none
  //   (Q4_K 14.5), and into L2 it slowed the AVX-512 kernels (28-30 -> 21-22), which keep none.
  // TESSEL_STREAM_PREFETCH=0|1|2 (none; stream_prefetch; stream_prefetch_l2) and
  // TESSEL_DECODE_STREAMS=1|2|4 in the environment override them (TESSEL_DECODE_STREAMS sets all four
  // stream counts; the row kernels read 1 as 2).
  bool stream_prefetch = true;
  bool stream_prefetch_l2 = false;
  int decode_streams = 4;
  int decode_streams_ymm = 4;
  int row_streams = 4;
  int row_streams_threaded = 2;

  // TESSEL_MAX_ISA=LEVEL in the environment: the level the features were capped at (nullptr: none), and
  // whether this CPU lacks part of that level (then the cap cannot stand for a CPU of that level).
  const char* isa_cap = nullptr;
  bool isa_cap_unmet = false;

  // Short description, e.g. "x86-64 avx2 fma f16c avx512f avx512bw avx512vl avx512dq avx512vnni".
  std::string ToString() const;
};

// The levels TESSEL_MAX_ISA accepts, lowest first, separated by '|': on x86-64 "portable|avx2|avx2vnni|
// avx512|avx512vnni" (avx2: AVX2 + FMA + F16C, as Zen 2/3; avx2vnni: and AVX-VNNI, as Alder Lake;
// avx512: AVX-512 F/BW/VL/DQ without VNNI, as Skylake-X; avx512vnni: and AVX-512 VNNI, as Cascade Lake),
// on aarch64 "portable|neon|dotprod|i8mm|sve|sve2".
const char* IsaCapLevels();
// Clears every feature of *f outside `level` (one of IsaCapLevels): a cap only ever removes features.
// Returns false, leaving *f alone, for an unknown level. Sets isa_cap / isa_cap_unmet.
bool CapCpuFeatures(const char* level, CpuFeatures* f);

// Detected on first use (thread-safe) and never changes afterwards. TESSEL_MAX_ISA=LEVEL caps it
// (CapCpuFeatures), so that one machine can run and time the kernels a lesser CPU would choose; an
// unknown level is reported on stderr and ignored.
const CpuFeatures& GetCpuFeatures();

}  // namespace tessel

#endif  // TESSEL_KERNELS_CPU_CPU_FEATURES_H_
