// The fp16 -> f32 lookup table used by the x86 GEMV kernels.
#include "kernels/gemv/internal/quant_blocks.h"

namespace tessel {

const float* Fp16ToF32Table() {
  // A static array (no heap), filled once; the function-local static makes the fill thread-safe.
  static float table[1 << 16];
  static const bool filled = [] {
    for (uint32_t h = 0; h < (1u << 16); ++h) table[h] = HalfToFloat(static_cast<uint16_t>(h));
    return true;
  }();
  (void)filled;
  return table;
}

}  // namespace tessel
