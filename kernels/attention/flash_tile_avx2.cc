// The vector tile kernel (internal/flash_tile_vec16.inc) built for AVX2 + FMA + F16C (x86 CPUs without
// AVX-512): a 16-float vector is two ymm registers, halves widen with vcvtph2ps, and the blocking is the
// baseline copy's (16 registers).
#include <immintrin.h>

#include "kernels/attention/internal/flash_tile_vec16.inc"

namespace tessel {
namespace {

struct Avx2Ops {
  static constexpr int kScoreRows = 4;
  static constexpr int kColumnVectors = 2;
  static constexpr int kAccumulators = 4;
  static F32x16 LoadHalf(const uint16_t* p) {
    const __m256 lo = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    const __m256 hi = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 8)));
    return F32x16{{(NativeF)lo, (NativeF)hi}};
  }
};

}  // namespace

void flash_tile__avx2(const AttentionParams& p, const float* q, int64_t n, int64_t pos0, const KvView& kv,
                      float* out, int kv_head, int64_t i0, float* scratch) {
  VectorTileAny<Avx2Ops>(p, q, n, pos0, kv, out, kv_head, i0, scratch);
}

}  // namespace tessel
