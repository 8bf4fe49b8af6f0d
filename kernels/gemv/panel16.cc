// Panel16 layout (gemv.h): packing, unpacking and the reference kernel, portable C++.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/gemv/gemv.h"
#include "kernels/gemv/internal/gemv_kernels.h"
#include "kernels/gemv/internal/quant_blocks.h"

namespace tessel {
namespace {

constexpr int kPanelRows = 16;

struct Geometry {
  bool q4;
  int vecs;  // K: 64-byte vectors per block
  int64_t block_bytes, nb, pairs, pair_bytes;
  Geometry(GemvFormat format, int64_t cols)
      : q4(format == GemvFormat::kQ4_0),
        vecs(q4 ? 4 : 8),
        block_bytes(q4 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0)),
        nb(cols / kQBlock),
        pairs((nb + 1) / 2),
        pair_bytes(2 * int64_t{vecs} * 64 + 64) {}
  // Where block b of row r lives: its vector bytes start at *vec (dword lane = r % 16), its scale at *scale.
  void Locate(int64_t r, int64_t b, int64_t* vec, int64_t* scale) const {
    const int64_t pair = ((r / kPanelRows) * pairs + b / 2) * pair_bytes;
    const int lane = static_cast<int>(r % kPanelRows), h = static_cast<int>(b % 2);
    *vec = pair + 64 + int64_t{h} * vecs * 64 + 4 * lane;
    *scale = pair + 2 * (h * kPanelRows + lane);
  }
};

}  // namespace

int64_t GemvPanel16Bytes(GemvFormat format, int64_t rows, int64_t cols) {
  const Geometry g(format, cols);
  return (rows + kPanelRows - 1) / kPanelRows * g.pairs * g.pair_bytes;
}

void PackGemvPanel16(GemvFormat format, const void* w, int64_t rows, int64_t cols, void* out) {
  const Geometry g(format, cols);
  auto* dst = static_cast<uint8_t*>(out);
  const auto* src = static_cast<const uint8_t*>(w);
  const int64_t row_bytes = g.nb * g.block_bytes;
  const uint32_t flip = g.q4 ? 0 : 0x80808080u;
  // In destination order, so that the writes stream; the reads walk 16 rows side by side.
  for (int64_t p = 0; p * kPanelRows < rows; ++p) {
    const int lanes = static_cast<int>(std::min<int64_t>(kPanelRows, rows - p * kPanelRows));
    for (int64_t j = 0; j < g.pairs; ++j) {
      uint8_t* pair = dst + (p * g.pairs + j) * g.pair_bytes;
      std::memset(pair, 0, g.pair_bytes);  // missing rows and the padding block stay zero
      for (int h = 0; h < 2 && 2 * j + h < g.nb; ++h) {
        for (int lane = 0; lane < lanes; ++lane) {
          const int64_t r = p * kPanelRows + lane, b = 2 * j + h;
          const uint8_t* blk = src + r * row_bytes + b * g.block_bytes;
          int64_t vec, scale;
          g.Locate(r, b, &vec, &scale);
          for (int k = 0; k < g.vecs; ++k) {
            uint32_t v;
            std::memcpy(&v, blk + 2 + 4 * k, 4);
            v ^= flip;
            std::memcpy(dst + vec + 64 * k, &v, 4);
          }
          std::memcpy(dst + scale, blk, 2);
        }
      }
    }
  }
}

void UnpackGemvPanel16Row(GemvFormat format, const void* packed, int64_t cols, int64_t r, void* row_out) {
  const Geometry g(format, cols);
  const auto* src = static_cast<const uint8_t*>(packed);
  const uint8_t flip = g.q4 ? 0 : 0x80;
  for (int64_t b = 0; b < g.nb; ++b) {
    uint8_t* blk = static_cast<uint8_t*>(row_out) + b * g.block_bytes;
    int64_t vec, scale;
    g.Locate(r, b, &vec, &scale);
    for (int k = 0; k < g.vecs; ++k) {
      for (int i = 0; i < 4; ++i) blk[2 + 4 * k + i] = src[vec + 64 * k + i] ^ flip;
    }
    std::memcpy(blk, src + scale, 2);
  }
}

namespace {

// Signed weights from the packed bytes, x from the GemvQ8Input layout, exact integer dots per block,
// double accumulation; block_bias is not used (the kernel's zero-point trick is not re-derived here).
void Panel16Reference(GemvFormat format, const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  const Geometry g(format, a.cols);
  const auto* w = static_cast<const uint8_t*>(a.w);
  for (int64_t t = 0; t < a.n; ++t) {
    const int8_t* xq = a.xq + t * a.xq_stride;
    const float* bscale = a.block_scale + t * a.block_stride;
    for (int64_t r = row_begin; r < row_end; ++r) {
      double sum = 0;
      for (int64_t b = 0; b < g.nb; ++b) {
        int64_t vec, scale;
        g.Locate(r, b, &vec, &scale);
        int64_t dot = 0;
        for (int j = 0; j < kQBlock; ++j) {
          int q, x;
          if (g.q4) {
            const uint8_t byte = w[vec + 64 * ((j % 16) / 4) + j % 4];
            q = (j < 16 ? byte & 15 : byte >> 4) - 8;
            x = xq[(b / 4) * 128 + 16 * (b % 4) + (j < 16 ? j : 64 + j - 16)];
          } else {
            q = static_cast<int>(w[vec + 64 * (j / 4) + j % 4] ^ 0x80);
            q = q >= 128 ? q - 256 : q;
            x = xq[b * kQBlock + j];
          }
          dot += int64_t{q} * x;
        }
        uint16_t d;
        std::memcpy(&d, w + scale, 2);
        sum += static_cast<double>(Fp16ToF32(d)) * bscale[b] * static_cast<double>(dot);
      }
      a.y[t * a.ldy + r] = static_cast<float>(sum);
    }
  }
}

}  // namespace

void tessel_q4_0x16_q8_gemm__reference(const GemmQ8Args& args, int64_t row_begin, int64_t row_end) {
  Panel16Reference(GemvFormat::kQ4_0, args, row_begin, row_end);
}

void tessel_q8_0x16_q8_gemm__reference(const GemmQ8Args& args, int64_t row_begin, int64_t row_end) {
  Panel16Reference(GemvFormat::kQ8_0, args, row_begin, row_end);
}

}  // namespace tessel
