// y = x W^T for a batch of token activations x [n, cols] against a weight matrix W [rows, cols] in any
// supported ggml type. One token (decode) runs the weight-only GEMV kernels, which read quantized
// weights directly: for Q4_0 and Q8_0, x is quantized to int8 once per call and kernels/gemv's
// int8 dot-product kernels run where the CPU has them (as llama.cpp does), else its f32-input ones.
// Several tokens (prefill) of Q4_0 / Q8_0 on int8 hardware quantize every token once per call and run
// kernels/gemv's multi-token int8 GEMM (GemmQ8Kernels). Matrices repacked to Panel16 (Q4_0, Q4_1, Q8_0
// and the Tessel INT4 / INT3 group types) run its Panel16 kernels for both, x in int8; other types
// dequantize 8-row panels of W once and run a register-blocked f32 GEMM over all tokens. Rows are split across the thread pool. Scratch
// is allocated when the Matmul is built (the prefill int8 input grows to the largest token count
// seen), never per call in steady state.
#ifndef TESSEL_LLM_MATMUL_MATMUL_H_
#define TESSEL_LLM_MATMUL_MATMUL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemv/gemv.h"
#include "support/thread_pool.h"
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
  // Prefill through kernels/gemm: weight rows dequantized per task, tokens per GEMM call.
  static constexpr int kF32ChunkRows = 64;
  static constexpr int kF32TokenBlock = 64;
  // Below this many tokens, types without an int8 GEMM run the decode kernels once per token.
  static constexpr int kF32MinTokens = 8;

  // Scratch for weight matrices of up to max_cols columns on every thread of `pool`.
  Matmul(int64_t max_cols, ThreadPool* pool);

  // y[t * w.rows + r] = sum_k x[t * w.cols + k] * W[r, k] for t < n. w.cols <= max_cols.
  void Run(const WeightMatrix& w, const float* x, int64_t n, float* y);
  // Several matrices sharing the input x (same cols), in one parallel loop.
  void RunGroup(absl::Span<const MatmulJob> jobs, const float* x, int64_t n);

  // Per-type timing (tessel generate --verbose): while on, the time of every task is added to its
  // matrix's type, for one-token calls (decode) and larger ones apart. Two clock reads per task.
  void EnableTypeTiming(bool on);
  // Seconds that tasks on matrices of `type` ran since timing was enabled, summed over the threads.
  double TypeSeconds(GgmlType type, bool decode) const;

 private:
  ThreadPool* pool_;
  int64_t max_cols_;
  // Per thread: a packed panel (max_cols x kPanelRows floats) and one dequantized row.
  std::vector<std::unique_ptr<float[]>> scratch_;
  // The decode input quantized to int8, one layout per format (kernels/gemv GemvQ8Input).
  struct Q8Buffers {
    std::vector<int8_t> q;
    std::vector<int32_t> bias;
    std::vector<float> scale;
    GemvQ8Input view() { return {q.data(), bias.data(), scale.data()}; }
  };
  Q8Buffers q8_input_[2];  // [0]: Q4_0 layout, [1]: Q8_0 layout
  // The prefill input, every token quantized (GemvQ8Input per token, packed); grown to the largest
  // token count seen.
  Q8Buffers gemm_input_[2];
  std::vector<int32_t> gemm_block_bias_[2];  // GemmQ8BlockTerms per token
  std::vector<float> gemm_block_scale_[2];
  std::vector<int32_t> gemm_half_bias_;  // GemmQ8HalfBias per token (Q4_0 layout), for Q6_K
  // Prefill of the other types (F32, F16, BF16, Q4_1, ...) through kernels/gemm's f32 GEMM: per task,
  // kF32ChunkRows rows dequantized once, then C^T = W_chunk x^T in blocks of kF32TokenBlock tokens.
  // Null when only the reference GEMM is available (then 8-row panels and a portable tile).
  const GemmKernel* f32_gemm_ = nullptr;
  std::vector<std::unique_ptr<float[]>> f32_rows_;        // per thread: kF32ChunkRows x max_cols
  std::vector<std::unique_ptr<float[]>> f32_out_;         // per thread: kF32ChunkRows x kF32TokenBlock
  std::vector<std::shared_ptr<char>> f32_workspace_;      // per thread: the GEMM's packing scratch
  std::vector<float> xt_;                                 // x transposed [cols, n], grown as needed
  // x^T packed once per RunGroup for the prepacked GEMM (every chunk of every job multiplies it), with
  // per-thread scratch and outputs [kF32ChunkRows, n] grown to the largest n seen.
  std::vector<std::unique_ptr<char[]>> packed_workspace_;
  std::vector<size_t> packed_workspace_bytes_;
  std::vector<std::vector<float>> packed_out_;
  // Per thread, seconds per type id (kTimedTypes of them) for n == 1, then for n > 1; empty when off.
  static constexpr int kTimedTypes = 256;
  std::vector<std::vector<double>> type_seconds_;
};

// How Matmul::Run multiplies a matrix by x on this CPU.
enum class MatmulPath {
  kInt8,         // x quantized to int8, integer dot products on an ISA-specific kernel
  kF32Vector,    // f32 x against f32 / f16 / bf16 weights on an ISA-specific kernel (row kernels, f32 GEMM)
  kF32Dequant,   // f32 x against weights dequantized by portable code, then an f32 kernel
  kPortable,     // portable C++ kernels throughout
};
const char* MatmulPathName(MatmulPath path);
struct MatmulKernel {
  std::string name;  // the kernel's registry or function name
  MatmulPath path;
};
// What Matmul(…, pool of `threads`) runs for `w` (its layout as loaded) and n tokens: n = 1 is decode,
// larger n prefill. Mirrors RunGroup's choice.
MatmulKernel DescribeMatmul(const WeightMatrix& w, int64_t n, int threads);

// Reference twin: dequantize, then accumulate in double. For tests.
void MatmulReference(const WeightMatrix& w, const float* x, int64_t n, float* y);

}  // namespace tessel::llm

#endif  // TESSEL_LLM_MATMUL_MATMUL_H_
