// Reference weight-only GEMV: dequantize each element exactly as gemv.h defines it and accumulate in
// double. The oracle for every other GEMV kernel. The int8-input twins read x from the GemvQ8Input
// layout element by element (not lane by lane), so they also check that layout.
#include "kernels/gemv/internal/gemv_kernels.h"

namespace tessel {

void tessel_q4_0_gemv__reference(const GemvArgs& a, int64_t row_begin, int64_t row_end) {
  const int64_t nb = a.cols / kQuantBlock;
  const auto* blocks = static_cast<const BlockQ4_0*>(a.w);
  for (int64_t r = row_begin; r < row_end; ++r) {
    double acc = 0;
    for (int64_t b = 0; b < nb; ++b) {
      const BlockQ4_0& blk = blocks[r * nb + b];
      const double d = HalfToFloat(blk.d);
      const float* x = a.x + b * kQuantBlock;
      for (int j = 0; j < 16; ++j) {
        acc += d * ((blk.qs[j] & 0xf) - 8) * x[j];
        acc += d * ((blk.qs[j] >> 4) - 8) * x[j + 16];
      }
    }
    a.y[r] = static_cast<float>(acc);
  }
}

void tessel_q8_0_gemv__reference(const GemvArgs& a, int64_t row_begin, int64_t row_end) {
  const int64_t nb = a.cols / kQuantBlock;
  const auto* blocks = static_cast<const BlockQ8_0*>(a.w);
  for (int64_t r = row_begin; r < row_end; ++r) {
    double acc = 0;
    for (int64_t b = 0; b < nb; ++b) {
      const BlockQ8_0& blk = blocks[r * nb + b];
      const double d = HalfToFloat(blk.d);
      for (int j = 0; j < kQuantBlock; ++j) acc += d * blk.qs[j] * a.x[b * kQuantBlock + j];
    }
    a.y[r] = static_cast<float>(acc);
  }
}

void tessel_i4g_gemv__reference(const GemvArgs& a, int64_t row_begin, int64_t row_end) {
  const int64_t g = a.group_size;
  const int64_t ng = a.cols / g;
  const auto* q = static_cast<const uint8_t*>(a.w);
  for (int64_t r = row_begin; r < row_end; ++r) {
    double acc = 0;
    for (int64_t gi = 0; gi < ng; ++gi) {
      const double s = GroupScale(a, r * ng + gi);
      const int z = GroupZero(a, r * ng + gi);
      const uint8_t* qg = q + r * (a.cols / 2) + gi * (g / 2);
      const float* x = a.x + gi * g;
      for (int64_t j = 0; j < g / 2; ++j) {
        acc += s * ((qg[j] & 0xf) - z) * x[j];
        acc += s * ((qg[j] >> 4) - z) * x[j + g / 2];
      }
    }
    a.y[r] = static_cast<float>(acc);
  }
}

void tessel_q4_0_q8_gemv__reference(const GemvArgs& a, int64_t row_begin, int64_t row_end) {
  const int64_t nb = a.cols / kQuantBlock;
  const auto* blocks = static_cast<const BlockQ4_0*>(a.w);
  for (int64_t r = row_begin; r < row_end; ++r) {
    double acc = 0;
    for (int64_t b = 0; b < nb; ++b) {
      const BlockQ4_0& blk = blocks[r * nb + b];
      const int8_t* lo = a.xq + (b / 4) * 128 + 16 * (b % 4);  // elements 0..15; 16..31 are 64 bytes on
      const double dx = a.xscale[(b / 4) * 16 + 4 * (b % 4)];
      int64_t dot = 0;
      for (int j = 0; j < 16; ++j) dot += ((blk.qs[j] & 0xf) - 8) * lo[j] + ((blk.qs[j] >> 4) - 8) * lo[64 + j];
      acc += HalfToFloat(blk.d) * dx * dot;
    }
    a.y[r] = static_cast<float>(acc);
  }
}

void tessel_q8_0_q8_gemv__reference(const GemvArgs& a, int64_t row_begin, int64_t row_end) {
  const int64_t nb = a.cols / kQuantBlock;
  const auto* blocks = static_cast<const BlockQ8_0*>(a.w);
  for (int64_t r = row_begin; r < row_end; ++r) {
    double acc = 0;
    for (int64_t b = 0; b < nb; ++b) {
      const BlockQ8_0& blk = blocks[r * nb + b];
      int64_t dot = 0;
      for (int j = 0; j < kQuantBlock; ++j) dot += blk.qs[j] * a.xq[b * kQuantBlock + j];
      acc += HalfToFloat(blk.d) * static_cast<double>(a.xscale[b * 8]) * dot;
    }
    a.y[r] = static_cast<float>(acc);
  }
}

namespace {

// The int8-input GEMV reference, once per token.
void GemmQ8Reference(GemvFn gemv, const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  for (int64_t t = 0; t < a.n; ++t) {
    GemvArgs g;
    g.w = a.w;
    g.rows = a.rows;
    g.cols = a.cols;
    g.xq = a.xq + t * a.xq_stride;
    g.xbias = a.xbias + t * a.lane_stride;
    g.xscale = a.xscale + t * a.lane_stride;
    g.y = a.y + t * a.ldy;
    gemv(g, row_begin, row_end);
  }
}

}  // namespace

void tessel_q4_0_q8_gemm__reference(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  GemmQ8Reference(tessel_q4_0_q8_gemv__reference, a, row_begin, row_end);
}

void tessel_q8_0_q8_gemm__reference(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  GemmQ8Reference(tessel_q8_0_q8_gemv__reference, a, row_begin, row_end);
}

}  // namespace tessel
