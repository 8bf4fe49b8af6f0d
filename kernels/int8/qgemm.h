// u8 x s8 GEMM with the quantized operators' output stage (per-channel fixed-point requantization,
// residual, clamp), bit-exact with the reference QConv / QGemm kernels. Microkernels are plain functions
// that never allocate; PackQGemmWeights prepares weights once per model.
#ifndef TESSEL_KERNELS_INT8_QGEMM_H_
#define TESSEL_KERNELS_INT8_QGEMM_H_

#include <cstdint>
#include <vector>

namespace tessel {

inline constexpr int kQGemmLanes = 16;  // output channels per zmm of i32
inline constexpr int kQGemmNr = 64;     // output channels per packed block (4 zmm)
inline constexpr int kQGemmMr = 6;      // rows per register tile

// Weights W [N, K] (s8) packed for the VNNI microkernel: K padded to kp (a multiple of 4), blocks of up to
// 64 output channels. Block b starts at b * 64 * kp bytes and holds nb = min(64, round_up(n - 64 b, 16))
// channels laid out [kp/4][nb][4]; per-channel requantization; bias with the input zero point folded in
// (bias - x_zp * sum_k W[n, k]). Channels past n are zero.
struct PackedQGemmWeights {
  int64_t n = 0, k = 0, kp = 0;
  std::vector<int8_t> panels;
  std::vector<int32_t> bias;        // padded to whole blocks
  std::vector<int32_t> multiplier;  // padded to whole blocks
  std::vector<int32_t> shift;       // padded to whole blocks
};

// `multiplier` / `shift` have 1 or n entries; `bias` may be null.
PackedQGemmWeights PackQGemmWeights(const int8_t* w, int64_t n, int64_t k, const int32_t* bias, int32_t x_zero_point,
                                    const std::vector<int64_t>& multiplier, const std::vector<int64_t>& shift);

struct QGemmOutputStage {
  int32_t y_zero_point = 0;
  int32_t act_min = 0, act_max = 255;
  // Residual term rq_r(R - r_zp), when residual is non-null.
  const uint8_t* residual = nullptr;
  int32_t r_zero_point = 0, r_multiplier = 0, r_shift = 0;
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

// Whether this build and CPU can run the VNNI kernel.
bool HasQGemmVnni();

}  // namespace tessel

#endif  // TESSEL_KERNELS_INT8_QGEMM_H_
