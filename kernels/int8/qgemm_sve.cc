// The u8 x s8 GEMM on SVE, vector-length agnostic. Like the NEON dotprod kernel it multiplies s8 by s8 with
// SDOT by lane (base SVE) on a ^ 0x80 = a - 128, the packed dot_bias adding back 128 * sum_k W, and it reads
// the same packed weights ([kp/4][nb][4] per 64-channel block), a layout fixed at pack time whatever the
// vector length: one vector load takes svcntw() channels x 4 bytes of K. Each row's 16 bytes of K are
// loaded once as a quadword replicated into every 128-bit segment (LD1RQB), so SDOT's per-segment lane
// index picks the same 4 bytes of K for every channel. Register tile: up to 8 rows x 2 vectors of channels
// (8 channels at 128 bits, 32 at 512); requantization in requantize_sve.h.
#include <arm_sve.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/int8/internal/qgemm_sve.h"
#include "kernels/int8/qgemm.h"

namespace tessel {
namespace {

using qgemm_sve::kMr;
using qgemm_sve::TileArgs;

inline svint8_t Flip(svuint8_t a) { return svreinterpret_s8_u8(sveor_n_u8_x(svptrue_b8(), a, 0x80)); }

// Expands X(r) for the 8 rows of a tile; rows r >= MR compile to nothing (if constexpr).
#define TESSEL_QSVE_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

#define TESSEL_QSVE_ACC(r) [[maybe_unused]] svint32_t c##r##0 = svdup_n_s32(0), c##r##1 = svdup_n_s32(0);
#define TESSEL_QSVE_PTR(r) [[maybe_unused]] const uint8_t* p##r = MR > r ? t.ind[r * t.ind_stride + s] : nullptr;
#define TESSEL_QSVE_DECLARE_A(r) [[maybe_unused]] svint8_t a##r;
#define TESSEL_QSVE_LOAD16(r) \
  if constexpr (MR > r) a##r = Flip(svld1rq_u8(all, p##r + kk * 4));
#define TESSEL_QSVE_LOAD4(r)                                      \
  if constexpr (MR > r) {                                         \
    uint32_t quad;                                                \
    std::memcpy(&quad, p##r + kk * 4, 4);                         \
    a##r = Flip(svreinterpret_u8_u32(svdup_n_u32(quad)));         \
  }
#define TESSEL_QSVE_DOT(r, lane)                                             \
  if constexpr (MR > r) {                                                    \
    c##r##0 = svdot_lane_s32(c##r##0, w0, a##r, lane);                       \
    if constexpr (NV == 2) c##r##1 = svdot_lane_s32(c##r##1, w1, a##r, lane); \
  }
#define TESSEL_QSVE_DOT0(r) TESSEL_QSVE_DOT(r, 0)
#define TESSEL_QSVE_DOT1(r) TESSEL_QSVE_DOT(r, 1)
#define TESSEL_QSVE_DOT2(r) TESSEL_QSVE_DOT(r, 2)
#define TESSEL_QSVE_DOT3(r) TESSEL_QSVE_DOT(r, 3)
// One 4-byte step of K: the step's weights for the tile's channels, then SDOT by `lane` for every row.
#define TESSEL_QSVE_STEP(lane)                                       \
  {                                                                  \
    const svint8_t w0 = svld1_s8(pb0, b);                            \
    [[maybe_unused]] const svint8_t w1 = NV == 2 ? svld1_s8(pb1, b + 4 * vl) : w0; \
    TESSEL_QSVE_ROWS(TESSEL_QSVE_DOT##lane)                          \
    b += t.b_stride;                                                 \
  }
#define TESSEL_QSVE_STORE(r)                                                         \
  if constexpr (MR > r) {                                                            \
    const int64_t off = (t.row + r) * ldy + t.col;                                   \
    const uint8_t* res = out.residual != nullptr ? out.residual + off : nullptr;     \
    qgemm_sve::StoreRow(pc0, c##r##0, TESSEL_QSVE_STAGE_ARGS(0), out, res, y + off); \
    if constexpr (NV == 2) {                                                         \
      qgemm_sve::StoreRow(pc1, c##r##1, TESSEL_QSVE_STAGE_ARGS(1), out,              \
                          res != nullptr ? res + vl : nullptr, y + off + vl);        \
    }                                                                                \
  }

// MR rows x NV vectors of channels.
template <int MR, int NV>
void Tile(const TileArgs& t, const PackedQGemmWeights& w, const QGemmOutputStage& out, uint8_t* y,
          int64_t ldy) {
  const int64_t vl = static_cast<int64_t>(svcntw());
  const svbool_t all = svptrue_b8();
  // Weight bytes of the tile's valid channels (the block may end within the second vector).
  const svbool_t pb0 = svwhilelt_b8_s64(int64_t{0}, 4 * t.channels);
  const svbool_t pb1 = svwhilelt_b8_s64(4 * vl, 4 * t.channels);
  TESSEL_QSVE_ROWS(TESSEL_QSVE_ACC)
  const int64_t seg4 = t.segment_len / 4;
  const int8_t* b = t.b;
  for (int64_t s = 0; s < t.segments; ++s) {
    TESSEL_QSVE_ROWS(TESSEL_QSVE_PTR)
    int64_t kk = 0;
    for (; kk + 4 <= seg4; kk += 4) {
      TESSEL_QSVE_ROWS(TESSEL_QSVE_DECLARE_A)
      TESSEL_QSVE_ROWS(TESSEL_QSVE_LOAD16)
      TESSEL_QSVE_STEP(0)
      TESSEL_QSVE_STEP(1)
      TESSEL_QSVE_STEP(2)
      TESSEL_QSVE_STEP(3)
    }
    for (; kk < seg4; ++kk) {
      TESSEL_QSVE_ROWS(TESSEL_QSVE_DECLARE_A)
      TESSEL_QSVE_ROWS(TESSEL_QSVE_LOAD4)
      TESSEL_QSVE_STEP(0)
    }
  }
  const svbool_t pc0 = svwhilelt_b32_s64(int64_t{0}, t.channels);
  [[maybe_unused]] const svbool_t pc1 = svwhilelt_b32_s64(vl, t.channels);
  TESSEL_QSVE_CHANNEL_STAGE(0, w.dot_bias.data(), t.col)
  TESSEL_QSVE_CHANNEL_STAGE(1, w.dot_bias.data(), t.col + (NV == 2 ? vl : 0))
  TESSEL_QSVE_ROWS(TESSEL_QSVE_STORE)
}

#undef TESSEL_QSVE_ROWS
#undef TESSEL_QSVE_ACC
#undef TESSEL_QSVE_PTR
#undef TESSEL_QSVE_DECLARE_A
#undef TESSEL_QSVE_LOAD16
#undef TESSEL_QSVE_LOAD4
#undef TESSEL_QSVE_DOT
#undef TESSEL_QSVE_DOT0
#undef TESSEL_QSVE_DOT1
#undef TESSEL_QSVE_DOT2
#undef TESSEL_QSVE_DOT3
#undef TESSEL_QSVE_STEP
#undef TESSEL_QSVE_STORE

using TileFn = void (*)(const TileArgs&, const PackedQGemmWeights&, const QGemmOutputStage&, uint8_t*, int64_t);

TileFn GetTile(int mr, int nv) {
  static constexpr TileFn kTiles[2][kMr] = {
      {Tile<1, 1>, Tile<2, 1>, Tile<3, 1>, Tile<4, 1>, Tile<5, 1>, Tile<6, 1>, Tile<7, 1>, Tile<8, 1>},
      {Tile<1, 2>, Tile<2, 2>, Tile<3, 2>, Tile<4, 2>, Tile<5, 2>, Tile<6, 2>, Tile<7, 2>, Tile<8, 2>}};
  return kTiles[nv - 1][mr - 1];
}

// QGemmU8S8__sve's and its indirect form's loop, on the dotprod layout (4 bytes of K per channel a step).
template <typename RowPointers>
void Run(int64_t rows, int64_t segments, int64_t segment_len, RowPointers&& row_pointers, const PackedQGemmWeights& w,
         const QGemmOutputStage& stage, uint8_t* y, int64_t ldy) {
  const int64_t vl = static_cast<int64_t>(svcntw());
  qgemm_sve::Run(rows, segments, segment_len, w, w.panels.data(), w.kp, 4, row_pointers, [&](const TileArgs& t) {
    GetTile(t.mr, t.channels > vl ? 2 : 1)(t, w, stage, y, ldy);
  });
}

}  // namespace

void QGemmU8S8__sve(const uint8_t* a, int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage,
                    uint8_t* y, int64_t ldy) {
  qgemm_sve::RunPlain(a, rows, w, [&](auto&&... args) { Run(args..., w, stage, y, ldy); });
}

void QGemmU8S8Indirect__sve(const uint8_t* const* indirection, int64_t segments, int64_t segment_len, int64_t rows,
                            const PackedQGemmWeights& w, const QGemmOutputStage& stage, uint8_t* y, int64_t ldy) {
  qgemm_sve::RunIndirect(indirection, segments, segment_len, rows,
                         [&](auto&&... args) { Run(args..., w, stage, y, ldy); });
}

}  // namespace tessel
