// The optimized int8 path for quantized nodes: tessel.QConv (channels-last, group 1) and tessel.QGemm on
// u8 activations run through a u8 x s8 GEMM (qgemm.h: AVX-512 VNNI, AVX-VNNI or AVX2 on x86-64, NEON
// dotprod or i8mm or SVE on aarch64; 1x1 convolutions directly, others as an implicit GEMM over per-tap
// row pointers when C is a multiple of 4, im2col otherwise); depthwise tessel.QConv (group == C_in == C_out, no residual) through
// the depthwise microkernels (qdwconv.h: AVX-512 VNNI, AVX2, NEON); anything else is left to the reference kernels. Results
// equal the reference kernels' bit for bit.
#ifndef TESSEL_KERNELS_INT8_INT8_KERNELS_H_
#define TESSEL_KERNELS_INT8_INT8_KERNELS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/graph.h"
#include "graph/tensor.h"
#include "kernels/int8/qdwconv.h"
#include "kernels/int8/qgemm.h"
#include "kernels/registry/registry.h"

namespace tessel {

// The GEMM microkernel family a PreparedInt8Node runs.
enum class QGemmKernel { kAvx512Vnni, kNeonDot, kNeonI8mm, kSve, kAvx2, kAvxVnni, kSveI8mm };

// What a QGemmKernels() entry holds: which family member, and its plain and indirect (per-tap row
// pointers) GEMMs (qgemm.h).
struct QGemmUkernel {
  QGemmKernel id = QGemmKernel::kAvx512Vnni;
  void (*plain)(const uint8_t*, int64_t, const PackedQGemmWeights&, const QGemmOutputStage&, uint8_t*,
                int64_t) = nullptr;
  void (*indirect)(const uint8_t* const*, int64_t, int64_t, int64_t, const PackedQGemmWeights&,
                   const QGemmOutputStage&, uint8_t*, int64_t) = nullptr;
};
using QGemmKernelEntry = KernelEntry<QGemmUkernel>;

// Every u8 x s8 GEMM built for this target (op "qgemm", dtypes "u8xs8", layout "packed"), ranked as
// BestQGemmKernel prefers them.
const KernelRegistry<QGemmUkernel>& QGemmKernels();

// Whether this build and CPU can run `kernel`.
bool QGemmKernelAvailable(QGemmKernel kernel);
// The fastest available kernel, chosen once through QGemmKernels() (x86-64: AVX-512 VNNI, then AVX-VNNI,
// then AVX2; aarch64: SVE i8mm, then i8mm, then SVE, then dotprod); only meaningful when one is available.
QGemmKernel BestQGemmKernel();

// Whether this path serves `node` with a first input of `input_dtype` and `input_rank` on this CPU (with
// any GEMM kernel).
bool Int8NodeSupported(const Node& node, DType input_dtype, int64_t input_rank);

// One supported node prepared for fixed shapes: weights packed (shared between preparations of the same
// weights), im2col / K-padding scratch sized once, so Run never allocates.
class PreparedInt8Node {
 public:
  // With `kernel` (fails when this CPU lacks it).
  static absl::StatusOr<std::unique_ptr<PreparedInt8Node>> Create(const Node& node,
                                                                  absl::Span<const Tensor* const> inputs,
                                                                  const Tensor& output, QGemmKernel kernel);
  // With BestQGemmKernel().
  static absl::StatusOr<std::unique_ptr<PreparedInt8Node>> Create(const Node& node,
                                                                  absl::Span<const Tensor* const> inputs,
                                                                  const Tensor& output);
  // `inputs` and `output` have the shapes given to Create.
  void Run(absl::Span<const Tensor* const> inputs, Tensor& output);

  // Run in two steps, for callers that split the rows over threads: Begin fills the indirection buffer
  // (once per input buffer) or a GEMM's padded A rows and returns the GEMM's operands; GemmRows computes
  // output rows [begin, end) of the output at `y`, a convolution's im2col rows first (rows() in all;
  // disjoint ranges may run concurrently).
  struct Operands {
    const uint8_t* a = nullptr;  // the GEMM's A rows, kp bytes apart (null: through the indirection buffer)
    QGemmOutputStage stage;
    const uint8_t* im2col_x = nullptr;  // the input whose im2col rows GemmRows writes to `a`, or null
  };
  Operands Begin(absl::Span<const Tensor* const> inputs);
  void GemmRows(const Operands& operands, int64_t begin, int64_t end, uint8_t* y) const;
  int64_t rows() const { return rows_; }
  int64_t columns() const { return n_; }
  // A GEMM of fewer than kColumnSplitRows rows with at least 128 output columns (a classifier's fully
  // connected layer at batch 1) keeps its weights as column_parts() packings of whole 64-column blocks,
  // so that callers can split the columns over threads instead of the rows: GemmColumns computes every
  // output row's columns of part `part` (disjoint parts may run concurrently). 0 when the weights are one
  // packing.
  static constexpr int64_t kColumnSplitRows = 8;
  int column_parts() const { return static_cast<int>(parts_.size()); }
  void GemmColumns(const Operands& operands, int part, uint8_t* y) const;

 private:
  PreparedInt8Node() = default;
  // Points indirection_ at the input buffer `a` (the indirect path).
  void FillIndirection(const uint8_t* a);
  // The im2col rows [begin, end) of input `a` into scratch_.
  void Im2colRows(const uint8_t* a, int64_t begin, int64_t end) const;
  // Rows [begin, end) of the output columns `w` covers, starting at column `col`.
  void Gemm(const Operands& operands, const PackedQGemmWeights& w, int64_t col, int64_t begin, int64_t end,
            uint8_t* y) const;
  QGemmKernel kernel_ = QGemmKernel::kAvx512Vnni;
  QGemmUkernel ukernel_{};
  bool conv_ = false;
  bool direct_ = false;  // the activations are the GEMM's A as they are (1x1 conv, K already padded)
  bool indirect_ = false;  // convolution as an implicit GEMM over per-tap row pointers (C a multiple of 4)
  int64_t rows_ = 0, n_ = 0;
  // Convolution geometry (channels-last).
  int64_t batch_ = 0, h_ = 0, w_ = 0, c_ = 0, kh_ = 0, kw_ = 0, oh_ = 0, ow_ = 0;
  int64_t stride_[2] = {1, 1}, pad_[2] = {0, 0}, dilation_[2] = {1, 1};
  uint8_t x_zero_point_ = 0;
  int64_t kp_ = 0;  // K padded as PackQGemmWeights pads it
  std::shared_ptr<const PackedQGemmWeights> weights_;  // null when the columns are packed in parts
  std::vector<std::shared_ptr<const PackedQGemmWeights>> parts_;
  std::vector<int64_t> part_begin_;  // each part's first output column
  QGemmOutputStage stage_;
  // A GEMM's padded A rows, or a convolution's im2col rows (written by GemmRows for the rows it computes).
  mutable std::vector<uint8_t> scratch_;
  // Indirect convolution: [rows][kh * kw] pointers into the input (or into zero_row_ for padding), built
  // for the input buffer at indirection_base_.
  std::vector<const uint8_t*> indirection_;
  std::vector<uint8_t> zero_row_;
  const uint8_t* indirection_base_ = nullptr;
};

// The depthwise microkernel family a PreparedQDwConv runs.
enum class QDwConvKernel { kAvx512Vnni, kAvx2, kNeon, kSveI8mm };

// Whether this build and CPU can run `kernel`.
bool QDwConvKernelAvailable(QDwConvKernel kernel);
// The fastest available one: AVX-512 VNNI, then AVX2 on x86-64; SVE with i8mm, then NEON on aarch64.
// Only meaningful when HasQDwConvKernel().
QDwConvKernel BestQDwConvKernel();

// Whether this CPU has a depthwise int8 kernel: AVX-512 VNNI or AVX2 on x86-64, NEON (every aarch64 CPU).
bool HasQDwConvKernel();

// Whether the depthwise kernel serves a QConv `node` with input [N, H, W, channels] of `input_dtype` and
// `input_rank`, weights [filters, KH, KW, filter_channels] and a residual input or not, on this CPU.
bool Int8DepthwiseSupported(const Node& node, DType input_dtype, int64_t input_rank, int64_t channels,
                            int64_t filters, int64_t filter_channels, bool residual);

// One depthwise QConv prepared for fixed shapes: weights packed, indirection buffer sized once (filled at
// Create when the input is bound, else on the first Run, and again only when the input buffer moves), so
// Run never allocates.
class PreparedQDwConv {
 public:
  // With `kernel` (fails when this CPU lacks it).
  static absl::StatusOr<std::unique_ptr<PreparedQDwConv>> Create(const Node& node,
                                                                 absl::Span<const Tensor* const> inputs,
                                                                 const Tensor& output, QDwConvKernel kernel);
  // With BestQDwConvKernel().
  static absl::StatusOr<std::unique_ptr<PreparedQDwConv>> Create(const Node& node,
                                                                 absl::Span<const Tensor* const> inputs,
                                                                 const Tensor& output);
  // `inputs` and `output` have the shapes given to Create.
  void Run(absl::Span<const Tensor* const> inputs, Tensor& output);

  // Run in two steps, for callers that split the output pixels over threads: Begin points the
  // indirection buffer at the input (once per input buffer), then Pixels computes output pixels
  // [begin, end) (of pixels()) into `y`, the output's data.
  void Begin(absl::Span<const Tensor* const> inputs);
  void Pixels(int64_t begin, int64_t end, uint8_t* y) const;
  int64_t pixels() const { return batch_ * oh_ * ow_; }
  // Multiply-adds of a run: what the caller weighs against a thread handoff.
  int64_t work() const { return pixels() * c_ * kh_ * kw_; }

 private:
  PreparedQDwConv() = default;
  // Points indirection_ at the input buffer `a`.
  void FillIndirection(const uint8_t* a);
  QDwConvKernel kernel_ = QDwConvKernel::kAvx512Vnni;
  int64_t batch_ = 0, h_ = 0, w_ = 0, c_ = 0, kh_ = 0, kw_ = 0, oh_ = 0, ow_ = 0;
  int64_t stride_[2] = {1, 1}, pad_[2] = {0, 0}, dilation_[2] = {1, 1};
  int32_t y_zero_point_ = 0, act_min_ = 0, act_max_ = 255;
  PackedQDwConvWeights weights_;           // AVX-512 VNNI
  PackedQDwConvAvx2Weights avx2_weights_;  // AVX2
  PackedQDwConvNeonWeights neon_weights_;  // aarch64
  PackedQDwConvSveWeights sve_weights_;    // SVE with i8mm
  // Pointers per pixel: quads * 4 (VNNI, SVE), pairs * 2 (AVX2) or kh * kw (NEON).
  int64_t taps_ = 0;
  // [pixels][taps_] pointers into the input (or into zero_row_ for padding and the taps past kh * kw),
  // built for the input buffer at indirection_base_.
  std::vector<const uint8_t*> indirection_;
  std::vector<uint8_t> zero_row_;
  const uint8_t* indirection_base_ = nullptr;
};

// Computes `node` into the preallocated `outputs` and returns true when this path serves it; false
// (outputs untouched) for nodes, layouts, dtypes or CPUs it does not cover. Packed weights are cached
// per weight tensor for the life of the process.
absl::StatusOr<bool> RunInt8Node(const Node& node, absl::Span<const Tensor* const> inputs, absl::Span<Tensor> outputs);

}  // namespace tessel

#endif  // TESSEL_KERNELS_INT8_INT8_KERNELS_H_
