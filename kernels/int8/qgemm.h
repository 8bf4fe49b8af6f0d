// u8 x s8 GEMM with the quantized operators' output stage (per-channel f32 requantization,
// residual, clamp), bit-exact with the reference QConv / QGemm kernels. Microkernels are plain functions
// that never allocate; PackQGemmWeights prepares weights once per model.
#ifndef TESSEL_KERNELS_INT8_QGEMM_H_
#define TESSEL_KERNELS_INT8_QGEMM_H_

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace tessel {

inline constexpr int kQGemmLanes = 16;  // output channels per zmm of i32
inline constexpr int kQGemmNr = 64;     // output channels per packed block (4 zmm)
inline constexpr int kQGemmMr = 6;      // rows per register tile

// std::vector storage on 64-byte boundaries. Packed panels need it: glibc's malloc aligns to 16 bytes only,
// so a panel's 32- and 64-byte weight loads straddled cache lines in about half the layers, and the AVX2
// kernel (8 weight loads per row and K quad) ran 25-35% slower on those (qgemm_benchmark, Zen 5).
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}  // NOLINT: allocator conversion
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, size_t) { ::operator delete(p, kAlign); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const CacheLineAllocator<U>&) const { return false; }
};
template <typename T>
using CacheLineVector = std::vector<T, CacheLineAllocator<T>>;

// Weights W [N, K] (s8) packed for the VNNI (AVX-512, AVX-VNNI and AVX2 alike) and NEON dotprod
// microkernels: K padded to kp (a multiple of 4), blocks of up to 64 output channels. Block b starts at
// b * 64 * kp bytes and holds nb = min(64, round_up(n - 64 b, 16)) channels laid out [kp/4][nb][4] (16
// bytes = 4 channels x 4 of K, what vpdpbusd and SDOT by lane consume); per-channel requantization; bias
// with the input zero point folded in (bias - x_zp * sum_k W[n, k]). Channels past n are zero.
//
// With `wide` the weights are also packed for the AVX2 microkernel, sign-extended to 16 bits: the same
// blocks and K quads, each 8-channel group of a quad as 32 int16 (64 bytes): the even bytes (K 0 and 2)
// of the 8 channels as [8][2], then the odd bytes (K 1 and 3) as [8][2], what vpmaddwd pairs with the
// quad's even and odd activation bytes. Element offsets equal `panels`' byte offsets.
//
// With mmla_segment_len > 0 the weights are also packed for the i8mm (USMMLA) microkernel: K is read as
// kp / mmla_segment_len runs (one per convolution tap, or one run for a GEMM), each padded with zeros to
// seg8 (a multiple of 8); block b starts at b * 64 * kp8 bytes (kp8 = runs * seg8) and holds nb channels
// laid out [kp8/8][nb/2][2][8] (16 bytes = 2 channels x 8 of K, one USMMLA operand).
struct PackedQGemmWeights {
  int64_t n = 0, k = 0, kp = 0;
  CacheLineVector<int8_t> panels;
  std::vector<int32_t> bias;        // padded to whole blocks
  std::vector<float> scale;         // requantization scales (RequantizeScale), padded to whole blocks
  // bias + 128 * sum_k W[n, k], for kernels that multiply s8 activations a ^ 0x80 = a - 128 (SDOT).
  std::vector<int32_t> dot_bias;  // padded to whole blocks
  int64_t mmla_segment_len = 0, seg8 = 0, kp8 = 0;
  CacheLineVector<int8_t> mmla_panels;  // empty unless packed with mmla_segment_len > 0
  CacheLineVector<int16_t> wide_panels;  // empty unless packed with wide
  // Every pair of weights that vpmaddubsw adds into one int16 (K 4q, 4q + 1 and 4q + 2, 4q + 3 of a
  // channel) has |w0| + |w1| <= 128, so that 255 x the pair sum fits int16: the AVX2 kernel then
  // multiplies the bytes as stored (`panels`, vpmaddubsw) instead of the widened `wide_panels`. 7-bit
  // weights ([-64, 64], what ONNX Runtime's quantizer writes with reduce_range) always do.
  bool byte_pairs_fit_int16 = false;
  // Every channel's accumulator (|bias| + 255 * sum |w| at most) times its scale stays within +-2^29
  // (ScaledAccumulatorsFitInt32): the 256-bit x86 kernels then requantize without the float clamp and
  // clamp with saturating packs, two rows at a time (with a residual whose term fits too:
  // ScaledResidualFitsUnclamped).
  bool scaled_fits_int32 = false;
};

// Whether every pair of weights that vpmaddubsw adds into one int16 (K 2j, 2j + 1 of a row of W [n, k])
// has |w0| + |w1| <= 128 (PackedQGemmWeights::byte_pairs_fit_int16).
bool QGemmBytePairsFitInt16(const int8_t* w, int64_t n, int64_t k);

// `multiplier` / `shift` have 1 or n entries; `bias` may be null. mmla_segment_len (0, or a multiple of
// 4 that divides kp) adds the i8mm layout, `wide` the AVX2 one.
PackedQGemmWeights PackQGemmWeights(const int8_t* w, int64_t n, int64_t k, const int32_t* bias, int32_t x_zero_point,
                                    const std::vector<int64_t>& multiplier, const std::vector<int64_t>& shift,
                                    int64_t mmla_segment_len = 0, bool wide = false);

struct QGemmOutputStage {
  int32_t y_zero_point = 0;
  int32_t act_min = 0, act_max = 255;
  // Residual term RequantizeF32(R - r_zp, r_scale), when residual is non-null.
  const uint8_t* residual = nullptr;
  int32_t r_zero_point = 0;
  float r_scale = 0.0f;
};

// Y[m, :] (ldy apart) = stage(A[m, :kp] . W^T) for m < rows; A rows are u8, kp bytes apart, zero-padded
// past k. The residual has Y's layout. Needs AVX-512 VNNI (see HasQGemmVnni).
void QGemmU8S8__avx512vnni(const uint8_t* a, int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage,
                           uint8_t* y, int64_t ldy);

// The same with indirect rows (implicit-GEMM convolution): row m of A is the concatenation of `segments`
// runs of `segment_len` bytes (a multiple of 4, segments * segment_len == kp) that start at
// indirection[m * segments + s].
void QGemmU8S8Indirect__avx512vnni(const uint8_t* const* indirection, int64_t segments, int64_t segment_len,
                                   int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage,
                                   uint8_t* y, int64_t ldy);

// The same two on AVX2 (exact: byte pairs widened to 16 bits, vpmaddwd, on `w` packed with `wide`; or,
// where w.byte_pairs_fit_int16, vpmaddubsw on the VNNI layout) and on AVX-VNNI (vpdpbusd on ymm, the VNNI
// layout).
void QGemmU8S8__avx2(const uint8_t* a, int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage,
                     uint8_t* y, int64_t ldy);
void QGemmU8S8Indirect__avx2(const uint8_t* const* indirection, int64_t segments, int64_t segment_len, int64_t rows,
                             const PackedQGemmWeights& w, const QGemmOutputStage& stage, uint8_t* y, int64_t ldy);
void QGemmU8S8__avxvnni(const uint8_t* a, int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage,
                        uint8_t* y, int64_t ldy);
void QGemmU8S8Indirect__avxvnni(const uint8_t* const* indirection, int64_t segments, int64_t segment_len,
                                int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage, uint8_t* y,
                                int64_t ldy);

// The same two on aarch64 NEON with dotprod: SDOT by lane on a ^ 0x80 (s8 x s8), with dot_bias making up
// for the flip; an 8-row x 8-channel register tile. Same arguments and results as the VNNI kernels.
void QGemmU8S8__neondot(const uint8_t* a, int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage,
                        uint8_t* y, int64_t ldy);
void QGemmU8S8Indirect__neondot(const uint8_t* const* indirection, int64_t segments, int64_t segment_len,
                                int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage, uint8_t* y,
                                int64_t ldy);

// The same two on aarch64 with i8mm: USMMLA (u8 x s8, 2 rows x 2 channels x 8 of K per instruction) on the
// mmla_panels layout. `w` must be packed with mmla_segment_len == kp for QGemmU8S8__neoni8mm and
// == segment_len for the indirect form.
void QGemmU8S8__neoni8mm(const uint8_t* a, int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage,
                         uint8_t* y, int64_t ldy);
void QGemmU8S8Indirect__neoni8mm(const uint8_t* const* indirection, int64_t segments, int64_t segment_len,
                                 int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage, uint8_t* y,
                                 int64_t ldy);

// The same two on SVE at any vector length: SDOT by lane on a ^ 0x80 with dot_bias, on the dotprod kernel's
// packed layout (w packed without the i8mm layout is enough); a register tile of up to 8 rows x 2 vectors.
void QGemmU8S8__sve(const uint8_t* a, int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage,
                    uint8_t* y, int64_t ldy);
void QGemmU8S8Indirect__sve(const uint8_t* const* indirection, int64_t segments, int64_t segment_len, int64_t rows,
                            const PackedQGemmWeights& w, const QGemmOutputStage& stage, uint8_t* y, int64_t ldy);

// The same two on SVE with i8mm at any vector length: USMMLA in every 128-bit segment on the mmla_panels
// layout (packed as for QGemmU8S8__neoni8mm); a register tile of up to 8 rows x 2 vectors of channels.
void QGemmU8S8__svei8mm(const uint8_t* a, int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage,
                        uint8_t* y, int64_t ldy);
void QGemmU8S8Indirect__svei8mm(const uint8_t* const* indirection, int64_t segments, int64_t segment_len,
                                int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage, uint8_t* y,
                                int64_t ldy);

// Whether this build and CPU can run the AVX-512 VNNI, the AVX2, the AVX-VNNI, the NEON dotprod, the NEON
// i8mm, the SVE and the SVE i8mm kernels.
bool HasQGemmVnni();
bool HasQGemmAvx2();
bool HasQGemmAvxVnni();
bool HasQGemmNeonDot();
bool HasQGemmNeonI8mm();
bool HasQGemmSve();
bool HasQGemmSveI8mm();

}  // namespace tessel

#endif  // TESSEL_KERNELS_INT8_QGEMM_H_
