// The u8 x s8 GEMM on SVE with i8mm (Neoverse V1 and later), vector-length agnostic. USMMLA multiplies,
// in every 128-bit segment, a 2x8 u8 block of A (two rows) by a 2x8 s8 block of W (two channels) into a
// 2x2 i32 tile: at 256 bits 64 multiply-adds an instruction, twice an SDOT by lane's. It reads the NEON
// i8mm kernel's packed layout ([kp8/8][nb/2][2][8] per 64-channel block): one vector load takes the next
// svcntb() / 16 channel pairs of an 8-byte step of K, whatever the vector length. Each row pair's 16 bytes
// of K are two LD1RQB (a quadword replicated into every segment) and TRN1 / TRN2 on 64-bit elements, which
// give both 8-byte halves as [row 0 | row 1] in every segment. u8 x s8 needs no flip of A. Register tile:
// up to 4 row pairs x 4 weight vectors (16 accumulators; 2 x svcntw() channels); UZP1 / UZP2 on 64-bit
// elements turn an accumulator pair into the two rows' channels for the output stage (internal/qgemm_sve.h).
// An odd last row is paired with itself and not stored.
#include <arm_sve.h>

#include <algorithm>
#include <cstdint>

#include "kernels/int8/internal/qgemm_sve.h"
#include "kernels/int8/qgemm.h"

namespace tessel {
namespace {

using qgemm_sve::kMr;  // 4 row pairs
using qgemm_sve::TileArgs;

// Expands X(p) for the 4 row pairs of a tile; pairs p >= MP compile to nothing (if constexpr).
#define TESSEL_QMM_PAIRS(X) X(0) X(1) X(2) X(3)

#define TESSEL_QMM_ACC(p)                                                                       \
  [[maybe_unused]] svint32_t c##p##0 = svdup_n_s32(0), c##p##1 = c##p##0, c##p##2 = c##p##0, \
                             c##p##3 = c##p##0;
#define TESSEL_QMM_PTR(p)                                                                        \
  [[maybe_unused]] const uint8_t* r##p##0 =                                                     \
      MP > p ? t.ind[std::min(2 * p, MR - 1) * t.ind_stride + s] : nullptr;                     \
  [[maybe_unused]] const uint8_t* r##p##1 =                                                     \
      MP > p ? t.ind[std::min(2 * p + 1, MR - 1) * t.ind_stride + s] : nullptr;
#define TESSEL_QMM_DECLARE_A(p) [[maybe_unused]] svuint8_t lo##p, hi##p;
// Row pair p's next bytes of K (pred: all 16, or the first 8 or 4 with zeros after) as two operands.
#define TESSEL_QMM_LOAD(p)                                                           \
  if constexpr (MP > p) {                                                            \
    const svuint64_t x0 = svreinterpret_u64_u8(svld1rq_u8(pa, r##p##0 + kk));        \
    const svuint64_t x1 = svreinterpret_u64_u8(svld1rq_u8(pa, r##p##1 + kk));        \
    lo##p = svreinterpret_u8_u64(svtrn1_u64(x0, x1));                                \
    hi##p = svreinterpret_u8_u64(svtrn2_u64(x0, x1));                                \
  }
#define TESSEL_QMM_MMLA(p, a)                                  \
  if constexpr (MP > p) {                                      \
    c##p##0 = svusmmla_s32(c##p##0, a##p, w0);                 \
    c##p##1 = svusmmla_s32(c##p##1, a##p, w1);                 \
    if constexpr (NV == 4) {                                   \
      c##p##2 = svusmmla_s32(c##p##2, a##p, w2);               \
      c##p##3 = svusmmla_s32(c##p##3, a##p, w3);               \
    }                                                          \
  }
#define TESSEL_QMM_MMLA_LO(p) TESSEL_QMM_MMLA(p, lo)
#define TESSEL_QMM_MMLA_HI(p) TESSEL_QMM_MMLA(p, hi)
// One 8-byte step of K at bp: the tile's weight vectors, then USMMLA for every row pair.
#define TESSEL_QMM_STEP(bp, PAIR_MMLA)                                                        \
  {                                                                                           \
    const svint8_t w0 = svld1_s8(pb0, bp), w1 = svld1_s8(pb1, bp + vb);                       \
    [[maybe_unused]] const svint8_t w2 = NV == 4 ? svld1_s8(pb2, bp + 2 * vb) : w0;           \
    [[maybe_unused]] const svint8_t w3 = NV == 4 ? svld1_s8(pb3, bp + 3 * vb) : w0;           \
    TESSEL_QMM_PAIRS(PAIR_MMLA)                                                               \
  }
// Row 2p + half: UZP1 (half 0) or UZP2 (half 1) of an accumulator pair is that row's svcntw() channels.
#define TESSEL_QMM_STORE_ROW(p, half, uzp)                                                     \
  if constexpr (MR > 2 * p + half) {                                                           \
    const int64_t off = (t.row + 2 * p + half) * ldy + t.col;                                  \
    const uint8_t* res = kResidual ? out.residual + off : nullptr;                             \
    qgemm_sve::StoreRow(pc0, Rows(uzp, c##p##0, c##p##1), TESSEL_QSVE_STAGE_ARGS(0), out, res, \
                        y + off);                                                              \
    if constexpr (NV == 4) {                                                                   \
      qgemm_sve::StoreRow(pc1, Rows(uzp, c##p##2, c##p##3), TESSEL_QSVE_STAGE_ARGS(1), out,    \
                          res != nullptr ? res + vl : nullptr, y + off + vl);                  \
    }                                                                                          \
  }
#define TESSEL_QMM_STORE(p) TESSEL_QMM_STORE_ROW(p, 0, svuzp1_s64) TESSEL_QMM_STORE_ROW(p, 1, svuzp2_s64)

// uzp(a, b) on the accumulators' 64-bit elements ([row 0 channel pair | row 1 channel pair] per segment).
template <typename Uzp>
inline svint32_t Rows(Uzp uzp, svint32_t a, svint32_t b) {
  return svreinterpret_s32_s64(uzp(svreinterpret_s64_s32(a), svreinterpret_s64_s32(b)));
}

// MR rows (MP = ceil(MR / 2) row pairs) x NV weight vectors (NV / 2 vectors of output channels); the
// residual term with kResidual. Both are template arguments so that the output stage is one branch-free
// block.
template <int MR, int NV, bool kResidual>
void Tile(const TileArgs& t, const PackedQGemmWeights& w, const QGemmOutputStage& out, uint8_t* y,
          int64_t ldy) {
  constexpr int MP = (MR + 1) / 2;
  const int64_t vb = static_cast<int64_t>(svcntb()), vl = static_cast<int64_t>(svcntw());
  // Weight bytes within the block (its channels past the tile's first: zeros for the padding channels).
  const svbool_t pb0 = svwhilelt_b8_s64(int64_t{0}, t.block_bytes);
  const svbool_t pb1 = svwhilelt_b8_s64(vb, t.block_bytes);
  [[maybe_unused]] const svbool_t pb2 = svwhilelt_b8_s64(2 * vb, t.block_bytes);
  [[maybe_unused]] const svbool_t pb3 = svwhilelt_b8_s64(3 * vb, t.block_bytes);
  TESSEL_QMM_PAIRS(TESSEL_QMM_ACC)
  const int64_t len = t.segment_len;
  const int8_t* b = t.b;
  for (int64_t s = 0; s < t.segments; ++s) {
    TESSEL_QMM_PAIRS(TESSEL_QMM_PTR)
    int64_t kk = 0;
    for (; kk + 16 <= len; kk += 16) {
      const svbool_t pa = svptrue_b8();
      TESSEL_QMM_PAIRS(TESSEL_QMM_DECLARE_A)
      TESSEL_QMM_PAIRS(TESSEL_QMM_LOAD)
      TESSEL_QMM_STEP(b, TESSEL_QMM_MMLA_LO)
      TESSEL_QMM_STEP(b + t.b_stride, TESSEL_QMM_MMLA_HI)
      b += 2 * t.b_stride;
    }
    // 8 or 4 bytes left (the packed run is padded to 8 with zero weights): loaded with zeros after.
    for (; kk < len; kk += 8) {
      const svbool_t pa = svwhilelt_b8_s64(int64_t{0}, std::min<int64_t>(len - kk, 8));
      TESSEL_QMM_PAIRS(TESSEL_QMM_DECLARE_A)
      TESSEL_QMM_PAIRS(TESSEL_QMM_LOAD)
      TESSEL_QMM_STEP(b, TESSEL_QMM_MMLA_LO)
      b += t.b_stride;
    }
  }
  const svbool_t pc0 = svwhilelt_b32_s64(int64_t{0}, t.channels);
  [[maybe_unused]] const svbool_t pc1 = svwhilelt_b32_s64(vl, t.channels);
  TESSEL_QSVE_CHANNEL_STAGE(0, w.bias.data(), t.col)
  TESSEL_QSVE_CHANNEL_STAGE(1, w.bias.data(), t.col + (NV == 4 ? vl : 0))
  TESSEL_QMM_PAIRS(TESSEL_QMM_STORE)
}

#undef TESSEL_QMM_PAIRS
#undef TESSEL_QMM_ACC
#undef TESSEL_QMM_PTR
#undef TESSEL_QMM_DECLARE_A
#undef TESSEL_QMM_LOAD
#undef TESSEL_QMM_MMLA
#undef TESSEL_QMM_MMLA_LO
#undef TESSEL_QMM_MMLA_HI
#undef TESSEL_QMM_STEP
#undef TESSEL_QMM_STORE_ROW
#undef TESSEL_QMM_STORE

using TileFn = void (*)(const TileArgs&, const PackedQGemmWeights&, const QGemmOutputStage&, uint8_t*, int64_t);

template <int NV, bool kResidual>
constexpr TileFn kTileRow[kMr] = {Tile<1, NV, kResidual>, Tile<2, NV, kResidual>, Tile<3, NV, kResidual>,
                                  Tile<4, NV, kResidual>, Tile<5, NV, kResidual>, Tile<6, NV, kResidual>,
                                  Tile<7, NV, kResidual>, Tile<8, NV, kResidual>};

TileFn GetTile(int mr, int nv, bool residual) {
  if (residual) return nv == 4 ? kTileRow<4, true>[mr - 1] : kTileRow<2, true>[mr - 1];
  return nv == 4 ? kTileRow<4, false>[mr - 1] : kTileRow<2, false>[mr - 1];
}

// QGemmU8S8__svei8mm's and its indirect form's loop, on the i8mm layout (8 bytes of K per channel a step).
template <typename RowPointers>
void Run(int64_t rows, int64_t segments, int64_t segment_len, RowPointers&& row_pointers, const PackedQGemmWeights& w,
         const QGemmOutputStage& stage, uint8_t* y, int64_t ldy) {
  const int64_t vl = static_cast<int64_t>(svcntw());
  qgemm_sve::Run(rows, segments, segment_len, w, w.mmla_panels.data(), w.kp8, 8, row_pointers,
                 [&](const TileArgs& t) {
                   GetTile(t.mr, t.channels > vl ? 4 : 2, stage.residual != nullptr)(t, w, stage, y, ldy);
                 });
}

}  // namespace

void QGemmU8S8__svei8mm(const uint8_t* a, int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage,
                        uint8_t* y, int64_t ldy) {
  qgemm_sve::RunPlain(a, rows, w, [&](auto&&... args) { Run(args..., w, stage, y, ldy); });
}

void QGemmU8S8Indirect__svei8mm(const uint8_t* const* indirection, int64_t segments, int64_t segment_len,
                                int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage, uint8_t* y,
                                int64_t ldy) {
  qgemm_sve::RunIndirect(indirection, segments, segment_len, rows,
                         [&](auto&&... args) { Run(args..., w, stage, y, ldy); });
}

}  // namespace tessel
