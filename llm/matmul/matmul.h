// y = x W^T for a batch of token activations x [n, cols] against a weight matrix W [rows, cols] in any
// supported ggml type. One token (decode) runs the weight-only GEMV kernels, which read quantized
// weights directly; several tokens (prefill) dequantize 8-row panels of W once and run a register-
// blocked f32 GEMM over all tokens. Rows are split across the thread pool. Scratch is allocated when
// the Matmul is built, never per call.
#ifndef TESSEL_LLM_MATMUL_MATMUL_H_
#define TESSEL_LLM_MATMUL_MATMUL_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/types/span.h"
#include "llm/base/thread_pool.h"
#include "llm/matmul/weight_matrix.h"

namespace tessel::llm {

struct MatmulJob {
  const WeightMatrix* w;
  float* y;  // [n, w->rows], row-major
};

class Matmul {
 public:
  // Panels of this many weight rows are packed K-major for the GEMM microkernel.
  static constexpr int kPanelRows = 8;
  // Tokens per GEMM microkernel tile.
  static constexpr int kTileTokens = 4;

  // Scratch for weight matrices of up to max_cols columns on every thread of `pool`.
  Matmul(int64_t max_cols, ThreadPool* pool);

  // y[t * w.rows + r] = sum_k x[t * w.cols + k] * W[r, k] for t < n. w.cols <= max_cols.
  void Run(const WeightMatrix& w, const float* x, int64_t n, float* y);
  // Several matrices sharing the input x (same cols), in one parallel loop.
  void RunGroup(absl::Span<const MatmulJob> jobs, const float* x, int64_t n);

 private:
  ThreadPool* pool_;
  int64_t max_cols_;
  // Per thread: a packed panel (max_cols x kPanelRows floats) and one dequantized row.
  std::vector<std::unique_ptr<float[]>> scratch_;
};

// Reference twin: dequantize, then accumulate in double. For tests.
void MatmulReference(const WeightMatrix& w, const float* x, int64_t n, float* y);

}  // namespace tessel::llm

#endif  // TESSEL_LLM_MATMUL_MATMUL_H_
