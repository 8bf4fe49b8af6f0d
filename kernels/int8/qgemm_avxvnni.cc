// The u8 x s8 GEMM on AVX-VNNI (Alder Lake and later, Zen 5 without AVX-512's VNNI in use): the VEX
// vpdpbusd adds four u8 x s8 products per i32 lane, exactly, on ymm. A tile of 6 rows x 16 channels:
// 12 accumulators, 2 weight vectors, 1 broadcast quad.
#include <immintrin.h>

#include "kernels/int8/internal/qgemm_x86_256.h"
#include "kernels/int8/qgemm.h"

namespace tessel {
namespace {

struct AvxVnniDot {
  static constexpr int kMr = 6, kNv = 2;
  using Elem = int8_t;
  using W = __m256i;
  using A = __m256i;
  static const int8_t* Panels(const PackedQGemmWeights& w) { return w.panels.data(); }
  static W LoadW(const int8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static A BroadcastA(int32_t quad) { return _mm256_set1_epi32(quad); }
  static __m256i Mac(__m256i acc, A x, W w) { return _mm256_dpbusd_avx_epi32(acc, x, w); }
};

}  // namespace

void QGemmU8S8__avxvnni(const uint8_t* a, int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage,
                        uint8_t* y, int64_t ldy) {
  qgemm_x86_256::Gemm<AvxVnniDot>(a, rows, w, stage, y, ldy);
}

void QGemmU8S8Indirect__avxvnni(const uint8_t* const* indirection, int64_t segments, int64_t segment_len,
                                int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage, uint8_t* y,
                                int64_t ldy) {
  qgemm_x86_256::GemmIndirect<AvxVnniDot>(indirection, segments, segment_len, rows, w, stage, y, ldy);
}

}  // namespace tessel
