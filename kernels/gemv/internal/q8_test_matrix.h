// Test helpers shared by the int8-input GEMV and GEMM tests: a seeded LCG, an independent fp16
// decoder, and random Q4_0 / Q8_0 matrices with their integer weights and block scales kept aside.
#ifndef TESSEL_KERNELS_GEMV_INTERNAL_Q8_TEST_MATRIX_H_
#define TESSEL_KERNELS_GEMV_INTERNAL_Q8_TEST_MATRIX_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/gemv/gemv.h"

namespace tessel::q8_test {

class Lcg {
 public:
  explicit Lcg(uint64_t seed) : s_(seed * 6364136223846793005ull + 1442695040888963407ull) {}
  uint32_t Next() {
    s_ = s_ * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(s_ >> 33);
  }
  float Uniform(float lo, float hi) { return lo + (hi - lo) * (Next() & 0xffffff) / float(0x1000000); }

 private:
  uint64_t s_;
};

// (1 + m/1024) * 2^(e-15) for normal halves; the kernels' own conversion is not used here.
double DecodeHalf(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const double v = e == 0 ? std::ldexp(double(m), -24) : std::ldexp(1.0 + m / 1024.0, e - 15);
  return (h & 0x8000) ? -v : v;
}

struct Matrix {
  std::vector<uint8_t> bytes;
  std::vector<int> q;          // rows x cols integer weights (nibble - 8, or int8)
  std::vector<double> scale;   // rows x blocks
};

Matrix MakeMatrix(GemvFormat f, int64_t rows, int64_t cols, Lcg& rng) {
  const bool q4 = f == GemvFormat::kQ4_0;
  const int64_t nb = cols / 32, block_bytes = q4 ? 18 : 34;
  Matrix m;
  // Exactly sized (no slack), so a kernel reading past the last block shows under ASan.
  m.bytes.resize(rows * nb * block_bytes);
  m.q.resize(rows * cols);
  m.scale.resize(rows * nb);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t b = 0; b < nb; ++b) {
      uint8_t* blk = m.bytes.data() + (r * nb + b) * block_bytes;
      const uint16_t d = static_cast<uint16_t>(((6 + rng.Next() % 9) << 10) | (rng.Next() & 0x3ff) |
                                               (rng.Next() % 4 == 0 ? 0x8000 : 0));
      std::memcpy(blk, &d, 2);
      m.scale[r * nb + b] = DecodeHalf(d);
      for (int j = 0; j < (q4 ? 16 : 32); ++j) blk[2 + j] = static_cast<uint8_t>(rng.Next());
      for (int j = 0; j < 32; ++j) {
        m.q[r * cols + b * 32 + j] =
            q4 ? (j < 16 ? blk[2 + j] & 0xf : blk[2 + j - 16] >> 4) - 8 : static_cast<int8_t>(blk[2 + j]);
      }
    }
  }
  return m;
}

}  // namespace tessel::q8_test

#endif  // TESSEL_KERNELS_GEMV_INTERNAL_Q8_TEST_MATRIX_H_
