// Group-wise INT4/INT3 dot products. Per group: d * (sum q_j x_j - zero * sum x_j), so the codes
// enter the lane accumulators as small integers converted to float, and the scale once per group.
#include "llm/matmul/group_row_dot.h"

#include "kernels/gemv/gemv.h"
#include "support/fp16.h"

namespace tessel::llm {
namespace {

constexpr int kLanes = 16;

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
template <GgmlType kType>
void i4g_rowdot__gemv(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  static const GemvFn kernel = SelectedGemvKernel(GemvFormat::kInt4Group).fn;
  TesselGroupFormat f;
  GetTesselGroupFormat(kType, &f);
  const size_t stride = w.row_stride;
  GemvArgs args;
  args.group_size = f.group;
  args.f16_scales = true;
  args.x = x;
  args.rows = 1;
  args.cols = w.cols;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const uint8_t* row = w.data + r * stride;
    args.w = row;
    args.scales = row + f.ScalesOffset(w.cols);
    args.zeros = f.asymmetric ? row + f.ZerosOffset(w.cols) : nullptr;
    args.y = y + (r - row_begin);
    kernel(args, 0, 1);
  }
}

}  // namespace

RowDotFn GetGroupRowDotPortable(GgmlType type) {
  switch (type) {
    case GgmlType::kTesselI4G32: return group_rowdot__portable<4, 32, false>;
    case GgmlType::kTesselI4G32A: return group_rowdot__portable<4, 32, true>;
    case GgmlType::kTesselI4G64: return group_rowdot__portable<4, 64, false>;
    case GgmlType::kTesselI4G64A: return group_rowdot__portable<4, 64, true>;
    case GgmlType::kTesselI4G128: return group_rowdot__portable<4, 128, false>;
    case GgmlType::kTesselI4G128A: return group_rowdot__portable<4, 128, true>;
    case GgmlType::kTesselI3G32: return group_rowdot__portable<3, 32, false>;
    case GgmlType::kTesselI3G32A: return group_rowdot__portable<3, 32, true>;
    case GgmlType::kTesselI3G64: return group_rowdot__portable<3, 64, false>;
    case GgmlType::kTesselI3G64A: return group_rowdot__portable<3, 64, true>;
    case GgmlType::kTesselI3G128: return group_rowdot__portable<3, 128, false>;
    case GgmlType::kTesselI3G128A: return group_rowdot__portable<3, 128, true>;
    default: return nullptr;
  }
}

RowDotFn GetGroupRowDot(GgmlType type) {
  switch (type) {
    case GgmlType::kTesselI4G32: return i4g_rowdot__gemv<GgmlType::kTesselI4G32>;
    case GgmlType::kTesselI4G32A: return i4g_rowdot__gemv<GgmlType::kTesselI4G32A>;
    case GgmlType::kTesselI4G64: return i4g_rowdot__gemv<GgmlType::kTesselI4G64>;
    case GgmlType::kTesselI4G64A: return i4g_rowdot__gemv<GgmlType::kTesselI4G64A>;
    case GgmlType::kTesselI4G128: return i4g_rowdot__gemv<GgmlType::kTesselI4G128>;
    case GgmlType::kTesselI4G128A: return i4g_rowdot__gemv<GgmlType::kTesselI4G128A>;
    default: return GetGroupRowDotPortable(type);
  }
}

}  // namespace tessel::llm
