// The output stage fused into the prepacked-weights GEMM (PackedGemmF32): bias, residual and clamp.
#ifndef TESSEL_KERNELS_GEMM_GEMM_EPILOGUE_H_
#define TESSEL_KERNELS_GEMM_GEMM_EPILOGUE_H_

#include <cstdint>
#include <limits>

namespace tessel {

// C = clamp(C + bias[col] + residual[row * ldr + col], lo, hi); null pointers are skipped.
struct GemmEpilogue {
  const float* bias = nullptr;
  const float* residual = nullptr;
  int64_t ldr = 0;
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
};

}  // namespace tessel

#endif  // TESSEL_KERNELS_GEMM_GEMM_EPILOGUE_H_
