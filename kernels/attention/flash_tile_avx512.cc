// The vector tile kernel (internal/flash_tile_vec16.inc) built for AVX-512: a 16-float vector is one
// zmm register, halves widen with vcvtph2ps, and the 32 registers hold 8 score rows or 16 value
// accumulators at once.
#include <immintrin.h>

#include "kernels/attention/internal/flash_tile_vec16.inc"

namespace tessel {
namespace {

struct Avx512Ops {
  static constexpr int kScoreRows = 8;
  static constexpr int kColumnVectors = 8;
  static constexpr int kAccumulators = 16;
  static F32x16 LoadHalf(const uint16_t* p) {
    return F32x16{{(NativeF)_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)))}};
  }
};

}  // namespace

void flash_tile__avx512(const AttentionParams& p, const float* q, int64_t n, int64_t pos0, const KvView& kv,
                        float* out, int kv_head, int64_t i0, float* scratch) {
  VectorTileAny<Avx512Ops>(p, q, n, pos0, kv, out, kv_head, i0, scratch);
}

}  // namespace tessel
