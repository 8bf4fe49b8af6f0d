// Row tiling shared by the int8 GEMM kernels (x86 VNNI and Arm NEON).
#ifndef TESSEL_KERNELS_INT8_INTERNAL_ROW_TILES_H_
#define TESSEL_KERNELS_INT8_INTERNAL_ROW_TILES_H_

#include <cstdint>

namespace tessel::int8_internal {

// Splits `rows` into tiles of kMr, the last two evened out so that no tile is much smaller; calls
// f(first_row, tile_rows) for each. Internal linkage: each ISA library keeps its own copy.
template <int kMr, typename F>
static inline void ForEachRowTile(int64_t rows, F&& f) {
  int64_t row = 0;
  while (row < rows) {
    const int64_t left = rows - row;
    int64_t mr = left;
    if (left > 2 * kMr) {
      mr = kMr;
    } else if (left > kMr) {
      mr = (left + 1) / 2;
    }
    f(row, static_cast<int>(mr));
    row += mr;
  }
}

}  // namespace tessel::int8_internal

#endif  // TESSEL_KERNELS_INT8_INTERNAL_ROW_TILES_H_
