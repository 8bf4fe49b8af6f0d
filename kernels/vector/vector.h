// f32 vector kernels: row softmax, RMSNorm, activations and elementwise arithmetic with a fused clamp,
// the memory-bound ops around the matmuls of a transformer or a CNN.
//
// Kernels (all registered in VectorKernels(), dtypes "f32", layout "contiguous"), one per op and ISA:
//   tessel_f32_<op>__reference  plain C++ (double sums), the oracle twin; chosen only when forced
//   tessel_f32_<op>__autovec    the portable C kernels of kernels/portable (GCC's auto-vectorizer)
//   tessel_f32_<op>__avx2       AVX2 + FMA, 4 vectors per iteration, masked (vmaskmovps) tails
//   tessel_f32_<op>__avx512     AVX-512, 4 vectors per iteration, masked tails
//   tessel_f32_<op>__neon       NEON, 4 vectors per iteration, tails through a zero-padded register
//   tessel_f32_<op>__sve        SVE, vector-length agnostic (whilelt-predicated loops, 2 vectors each)
// where <op> is softmax, rmsnorm, clamp, sigmoid, silu, hardswish, vadd_minmax or vmul_minmax (registry
// ops "softmax", "rmsnorm", "clamp", "sigmoid", "silu", "hardswish", "vadd", "vmul"). The exponential of
// every kernel uses tsl_expf's range reduction and polynomial (kernels/portable/tessel_portable.h).
// Kernels never allocate and never fail; sizes may be 0. An output may be the very array of an input
// (in place) but must not overlap it otherwise.
#ifndef TESSEL_KERNELS_VECTOR_VECTOR_H_
#define TESSEL_KERNELS_VECTOR_VECTOR_H_

#include <cstdint>
#include <variant>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kernels/registry/registry.h"

namespace tessel {

// "softmax": each of `rows` rows of x[rows][n] to exp(x - max) / sum.
using SoftmaxFn = void (*)(int64_t rows, int64_t n, const float* x, float* y);
// "rmsnorm": y = x / sqrt(mean(x^2) + eps) * gain per row of x[rows][n]; gain[n] may be null.
using RmsNormFn = void (*)(int64_t rows, int64_t n, const float* x, const float* gain, float eps, float* y);
// "clamp": y = min(max(x, lo), hi) (Relu: lo = 0, hi = inf; Relu6; Clip).
using ClampFn = void (*)(int64_t n, const float* x, float* y, float lo, float hi);
// "sigmoid", "silu" (x * sigmoid(x)), "hardswish" (x * min(max(x + 3, 0), 6) / 6).
using UnaryFn = void (*)(int64_t n, const float* x, float* y);
// "vadd", "vmul": y = min(max(a op b, lo), hi).
using BinaryFn = void (*)(int64_t n, const float* a, const float* b, float* y, float lo, float hi);

// A vector kernel is one of the five signatures above; the entry's op says which (std::get<RmsNormFn>(e.fn)).
using VectorFn = std::variant<SoftmaxFn, RmsNormFn, ClampFn, UnaryFn, BinaryFn>;
using VectorKernel = KernelEntry<VectorFn>;

// Every vector kernel built for this target (whatever the CPU supports; see CpuSupports). Costs are
// per call on ProblemShape{m = rows (1 for elementwise ops), n = elements per row}.
const KernelRegistry<VectorFn>& VectorKernels();

// The cheapest kernel for `op` that this CPU runs, for rows of a few thousand elements, restricted by
// `force` (a backend or kernel name; empty: none); NotFound (listing the candidates) when forcing leaves
// none.
absl::StatusOr<const VectorKernel*> SelectVectorKernel(absl::string_view op, absl::string_view force);
// The same with force = TESSEL_FORCE_BACKEND from the environment.
absl::StatusOr<const VectorKernel*> SelectVectorKernel(absl::string_view op);

}  // namespace tessel

#endif  // TESSEL_KERNELS_VECTOR_VECTOR_H_
