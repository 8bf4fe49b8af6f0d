// Group-wise INT4/INT3 dot products: per group d * (sum q_j x_j - zero * sum x_j), so the codes enter the
// lane accumulators as small integers converted to float, and the scale once per group.
#include "kernels/rowdot/rowdot_quant.h"

#include "kernels/gemv/gemv.h"
#include "kernels/gemv/ggml_blocks.h"
#include "support/fp16.h"

namespace tessel {
namespace {

constexpr int kLanes = 16;

// Q8_0 and Q4_0 run kernels/gemv's kernel for this CPU (the block layouts are ggml's in both).
template <GemvFormat kFormat>
void GemvRows(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  static const GemvFn kernel = SelectedGemvKernel(kFormat).fn;
  GemvArgs args;
  args.w = w.data + row_begin * w.row_stride;
  args.x = x;
  args.y = y;
  args.rows = row_end - row_begin;
  args.cols = w.cols;
  kernel(args, 0, args.rows);
}

inline float Reduce(const float* acc) {
  float s = 0.0f;
  for (int j = 0; j < kLanes; ++j) s += acc[j];
  return s;
}

template <int kBits, int kGroup, bool kAsym>
float GroupDot(const uint8_t* row, const float* x, int64_t cols) {
  constexpr int kGroupBytes = kGroup * kBits / 8;
  const int64_t ng = cols / kGroup;
  const uint16_t* scales = reinterpret_cast<const uint16_t*>(row + cols * kBits / 8);
  const uint8_t* zeros = row + cols * kBits / 8 + ng * 2;
  float total = 0.0f;
  for (int64_t g = 0; g < ng; ++g) {
    const uint8_t* c = row + g * kGroupBytes;
    const float* xb = x + g * kGroup;
    float accq[kLanes] = {}, accx[kLanes] = {};
    if constexpr (kBits == 4) {
      constexpr int kHalf = kGroup / 2;
      for (int j0 = 0; j0 < kHalf; j0 += kLanes) {
        for (int l = 0; l < kLanes; ++l) {
          const int j = j0 + l;
          accq[l] += static_cast<float>(c[j] & 0x0F) * xb[j] + static_cast<float>(c[j] >> 4) * xb[j + kHalf];
          accx[l] += xb[j] + xb[j + kHalf];
        }
      }
    } else {
      constexpr int kQuarter = kGroup / 4, kEighth = kGroup / 8;
      constexpr int kStep = kEighth < kLanes ? kEighth : kLanes;
      const uint8_t* high = c + kQuarter;
      for (int k = 0; k < 4; ++k) {
        // Element k * kQuarter + j: low bits at c[j] >> 2k, high bit at high[j % kEighth] bit 2k + j / kEighth.
        for (int h = 0; h < 2; ++h) {
          const float* xe = xb + k * kQuarter + h * kEighth;
          const uint8_t* lo = c + h * kEighth;
          for (int j0 = 0; j0 < kEighth; j0 += kStep) {
            for (int l = 0; l < kStep; ++l) {
              const int j = j0 + l;
              const int q = ((lo[j] >> (2 * k)) & 3) | (((high[j] >> (2 * k + h)) & 1) << 2);
              accq[l] += static_cast<float>(q) * xe[j];
              accx[l] += xe[j];
            }
          }
        }
      }
    }
    const float zero = kAsym ? static_cast<float>(zeros[g]) : static_cast<float>(1 << (kBits - 1));
    total += HalfToFloat(scales[g]) * (Reduce(accq) - zero * Reduce(accx));
  }
  return total;
}

template <int kBits, int kGroup, bool kAsym>
void group_rowdot__portable(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  const size_t stride = w.row_stride;
  for (int64_t r = row_begin; r < row_end; ++r) {
    y[r - row_begin] = GroupDot<kBits, kGroup, kAsym>(w.data + r * stride, x, w.cols);
  }
}

// One Int4Group GEMV of a single row per stored row: the row's planes are the kernel's q, scales and
// zeros for rows = 1.
template <int kGroup, bool kAsym>
void i4g_rowdot__gemv(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  static const GemvFn kernel = SelectedGemvKernel(GemvFormat::kInt4Group).fn;
  const size_t stride = w.row_stride;
  const int64_t scales_offset = w.cols / 2, zeros_offset = scales_offset + w.cols / kGroup * 2;
  GemvArgs args;
  args.group_size = kGroup;
  args.f16_scales = true;
  args.x = x;
  args.rows = 1;
  args.cols = w.cols;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const uint8_t* row = w.data + r * stride;
    args.w = row;
    args.scales = row + scales_offset;
    args.zeros = kAsym ? row + zeros_offset : nullptr;
    args.y = y + (r - row_begin);
    kernel(args, 0, 1);
  }
}

template <int kBits, bool kAsym>
RowDotFn PortableForGroup(int group) {
  switch (group) {
    case 32: return group_rowdot__portable<kBits, 32, kAsym>;
    case 64: return group_rowdot__portable<kBits, 64, kAsym>;
    case 128: return group_rowdot__portable<kBits, 128, kAsym>;
    default: return nullptr;
  }
}

template <bool kAsym>
RowDotFn GemvForGroup(int group) {
  switch (group) {
    case 32: return i4g_rowdot__gemv<32, kAsym>;
    case 64: return i4g_rowdot__gemv<64, kAsym>;
    case 128: return i4g_rowdot__gemv<128, kAsym>;
    default: return nullptr;
  }
}

}  // namespace

void q8_0_rowdot__gemv(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  GemvRows<GemvFormat::kQ8_0>(w, x, row_begin, row_end, y);
}

void q4_0_rowdot__gemv(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  GemvRows<GemvFormat::kQ4_0>(w, x, row_begin, row_end, y);
}

void q4_1_rowdot__portable(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  const int64_t nb = w.cols / kQuantBlock;
  const size_t stride = w.row_stride;
  constexpr int kHalf = kQuantBlock / 2;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const BlockQ4_1* b = reinterpret_cast<const BlockQ4_1*>(w.data + r * stride);
    float acc[kQuantBlock] = {};
    for (int64_t i = 0; i < nb; ++i) {
      const float d = HalfToFloat(b[i].d);
      const float m = HalfToFloat(b[i].m);
      const float* xb = x + i * kQuantBlock;
      for (int j = 0; j < kHalf; ++j) {
        acc[j] += ((b[i].qs[j] & 0x0F) * d + m) * xb[j];
        acc[j + kHalf] += ((b[i].qs[j] >> 4) * d + m) * xb[j + kHalf];
      }
    }
    y[r - row_begin] = ReduceRowLanes(acc, kQuantBlock);
  }
}

RowDotFn GroupRowDotPortable(int bits, int group, bool asymmetric) {
  if (bits == 4) return asymmetric ? PortableForGroup<4, true>(group) : PortableForGroup<4, false>(group);
  if (bits == 3) return asymmetric ? PortableForGroup<3, true>(group) : PortableForGroup<3, false>(group);
  return nullptr;
}

RowDotFn GroupRowDot(int bits, int group, bool asymmetric) {
  if (bits == 4) return asymmetric ? GemvForGroup<true>(group) : GemvForGroup<false>(group);
  return GroupRowDotPortable(bits, group, asymmetric);
}

}  // namespace tessel
