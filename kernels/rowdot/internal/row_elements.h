// The element types of unquantized weight rows that every ISA's row kernels read: their bytes per
// element, and one element widened to f32 for the scalar tails (support/fp16.h's exact conversions).
#ifndef TESSEL_KERNELS_ROWDOT_INTERNAL_ROW_ELEMENTS_H_
#define TESSEL_KERNELS_ROWDOT_INTERNAL_ROW_ELEMENTS_H_

#include <cstdint>
#include <cstring>

#include "support/fp16.h"

namespace tessel::rowdot_internal {

enum class Elem { kF16, kBf16, kF32 };
template <Elem E>
constexpr int kBytes = E == Elem::kF32 ? 4 : 2;

// The element at p as a float.
template <Elem E>
inline float Scalar(const uint8_t* p) {
  if constexpr (E == Elem::kF32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  } else {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return E == Elem::kBf16 ? BF16ToFloat(h) : HalfToFloat(h);
  }
}

}  // namespace tessel::rowdot_internal

#endif  // TESSEL_KERNELS_ROWDOT_INTERNAL_ROW_ELEMENTS_H_
