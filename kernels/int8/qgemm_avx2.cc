// The u8 x s8 GEMM on AVX2 (Haswell, Zen 1-3): no vpdpbusd, and vpmaddubsw's 16-bit sums saturate (255 *
// 127 * 2 > 32767), so each 4 bytes of K are split into even and odd byte pairs widened to 16 bits, and
// two exact vpmaddwd add their products into the i32 lanes. The weights come split and widened from
// packing (PackQGemmWeights' `wide` layout), the activations are split per row and K quad (2 ops, shared
// by the tile's 4 weight vectors). A tile of 3 rows x 32 channels: 12 accumulators, 2 activation halves.
//
// Weights whose byte pairs cannot saturate (PackedQGemmWeights::byte_pairs_fit_int16: 7-bit weights, as
// ONNX Runtime's quantizer writes them with reduce_range) take vpmaddubsw on the bytes as stored, then
// vpmaddwd by ones, exact, on the VNNI layout: 32 products per multiply instead of 16 and no widening
// (ONNX Runtime's AVX2 kernels multiply this way, saturating where the weights do not fit). A tile of 6
// rows x 16 channels.
#include <immintrin.h>

#include "kernels/int8/internal/qgemm_x86_256.h"
#include "kernels/int8/qgemm.h"

namespace tessel {
namespace {

struct Avx2Dot {
  static constexpr int kMr = 3, kNv = 4;
  using Elem = int16_t;
  // The weights stay in memory (vpmaddwd's second operand): 12 accumulators leave no room for them.
  using W = const int16_t*;
  struct A {
    __m256i even, odd;  // bytes 0, 2 and 1, 3 of the row's quad, zero-extended to 16 bits
  };
  static const int16_t* Panels(const PackedQGemmWeights& w) { return w.wide_panels.data(); }
  static W LoadW(const int16_t* p) { return p; }
  static A BroadcastA(int32_t quad) {
    const __m256i v = _mm256_set1_epi32(quad);
    return {_mm256_and_si256(v, _mm256_set1_epi16(0xFF)), _mm256_srli_epi16(v, 8)};
  }
  static __m256i Mac(__m256i acc, const A& x, W w) {
    const __m256i even = _mm256_madd_epi16(x.even, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
    const __m256i odd = _mm256_madd_epi16(x.odd, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 16)));
    return _mm256_add_epi32(acc, _mm256_add_epi32(even, odd));
  }
};

struct Avx2ByteDot {
  static constexpr int kMr = 6, kNv = 2;
  using Elem = int8_t;
  // Memory operands of vpmaddubsw: 12 accumulators, the ones, the activation and a product fill the 16.
  using W = const int8_t*;
  using A = __m256i;
  static const int8_t* Panels(const PackedQGemmWeights& w) { return w.panels.data(); }
  static W LoadW(const int8_t* p) { return p; }
  static A BroadcastA(int32_t quad) { return _mm256_set1_epi32(quad); }
  static __m256i Mac(__m256i acc, A x, W w) {
    const __m256i pairs = _mm256_maddubs_epi16(x, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
};

}  // namespace

void QGemmU8S8__avx2(const uint8_t* a, int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage,
                     uint8_t* y, int64_t ldy) {
  if (w.byte_pairs_fit_int16) return qgemm_x86_256::Gemm<Avx2ByteDot>(a, rows, w, stage, y, ldy);
  qgemm_x86_256::Gemm<Avx2Dot>(a, rows, w, stage, y, ldy);
}

void QGemmU8S8Indirect__avx2(const uint8_t* const* indirection, int64_t segments, int64_t segment_len, int64_t rows,
                             const PackedQGemmWeights& w, const QGemmOutputStage& stage, uint8_t* y, int64_t ldy) {
  if (w.byte_pairs_fit_int16) {
    return qgemm_x86_256::GemmIndirect<Avx2ByteDot>(indirection, segments, segment_len, rows, w, stage, y, ldy);
  }
  qgemm_x86_256::GemmIndirect<Avx2Dot>(indirection, segments, segment_len, rows, w, stage, y, ldy);
}

}  // namespace tessel
