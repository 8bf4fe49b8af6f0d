// Helpers shared by the int8 kernel tests (Tessel's and XNNPACK's).
#ifndef TESSEL_KERNELS_INT8_INTERNAL_INT8_TEST_UTIL_H_
#define TESSEL_KERNELS_INT8_INTERNAL_INT8_TEST_UTIL_H_

#include <cstdint>
#include <random>
#include <vector>

#include "graph/tensor.h"

namespace tessel::int8_test {

// A tensor of u8, i8 or i32 values drawn uniformly from [lo, hi].
inline Tensor Random(DType t, std::vector<int64_t> shape, std::mt19937& rng, int lo, int hi) {
  Tensor x(t, shape);
  std::uniform_int_distribution<int> d(lo, hi);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    if (t == DType::kU8) x.data<uint8_t>()[i] = static_cast<uint8_t>(d(rng));
    if (t == DType::kI8) x.data<int8_t>()[i] = static_cast<int8_t>(d(rng));
    if (t == DType::kI32) x.data<int32_t>()[i] = d(rng);
  }
  return x;
}

}  // namespace tessel::int8_test

#endif  // TESSEL_KERNELS_INT8_INTERNAL_INT8_TEST_UTIL_H_
