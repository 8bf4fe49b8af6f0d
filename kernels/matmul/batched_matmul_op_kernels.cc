// Batched MatMul on the f32 GEMM: the batch offsets of A and B are computed once at creation, so a run
// is one GEMM call per batch. The batches run on the calling thread: the GEMM's workspace (its packed
// B panels) is one per kernel, and attention's batches are a few microseconds each.
#include "kernels/matmul/batched_matmul_op_kernels.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/gemm/gemm.h"
#include "kernels/registry/bound_operands.h"

namespace tessel {
namespace {

struct BatchedShape {
  int64_t m = 0, n = 0, k = 0;
  std::vector<int64_t> a_offsets, b_offsets;  // per output batch, in elements
};

bool IsF32Static(const TensorType& t) { return t.dtype == DType::kF32 && t.is_static(); }

// Whether the kernel serves the node; fills `s` (with the batch offsets when `offsets`).
bool ResolveShape(const OpQuery& q, bool offsets, BatchedShape* s) {
  if (!q.has_input(0) || !q.has_input(1) || q.outputs.size() != 1) return false;
  const TensorType& a = q.input(0);
  const TensorType& b = q.input(1);
  if (!IsF32Static(a) || !IsF32Static(b) || !IsF32Static(q.output(0)) || a.rank() < 2 || b.rank() < 2) return false;
  if (q.inputs[1].constant && b.rank() == 2) return false;  // the fully connected kernels' case
  const int ra = a.rank(), rb = b.rank(), rank = std::max(ra, rb);
  s->m = a.dims[ra - 2].value();
  s->k = a.dims[ra - 1].value();
  s->n = b.dims[rb - 1].value();
  if (b.dims[rb - 2].value() != s->k || s->m < 1 || s->n < 1 || s->k < 1) return false;
  // Batch extents right-aligned, 1 where a side has fewer axes; then numpy broadcasting.
  std::vector<int64_t> ea(rank - 2, 1), eb(rank - 2, 1), out(rank - 2, 1);
  for (int d = 0; d < ra - 2; ++d) ea[rank - ra + d] = a.dims[d].value();
  for (int d = 0; d < rb - 2; ++d) eb[rank - rb + d] = b.dims[d].value();
  int64_t batches = 1;
  for (int d = 0; d < rank - 2; ++d) {
    if (ea[d] != eb[d] && ea[d] != 1 && eb[d] != 1) return false;
    out[d] = std::max(ea[d], eb[d]);
    batches *= out[d];
  }
  if (q.output(0).NumElements() != batches * s->m * s->n) return false;
  if (!offsets) return true;
  s->a_offsets.assign(static_cast<size_t>(batches), 0);
  s->b_offsets.assign(static_cast<size_t>(batches), 0);
  for (int64_t i = 0; i < batches; ++i) {
    int64_t rem = i, stride_a = s->m * s->k, stride_b = s->k * s->n;
    for (int d = rank - 3; d >= 0; --d) {
      const int64_t idx = rem % out[d];
      rem /= out[d];
      if (ea[d] != 1) s->a_offsets[i] += idx * stride_a;
      if (eb[d] != 1) s->b_offsets[i] += idx * stride_b;
      stride_a *= ea[d];
      stride_b *= eb[d];
    }
  }
  return true;
}

class BatchedMatMulKernel : public OpKernel {
 public:
  BatchedMatMulKernel(BatchedShape s, GemmF32 gemm, const OpKernelArgs& args)
      : s_(std::move(s)),
        gemm_(std::move(gemm)),
        a_(args.inputs[0]->data<float>()),
        b_(args.inputs[1]->data<float>()),
        c_(args.outputs[0].data<float>()) {}

  absl::Status Run() override {
    for (size_t i = 0; i < s_.a_offsets.size(); ++i) {
      gemm_.Run(a_ + s_.a_offsets[i], s_.k, b_ + s_.b_offsets[i], s_.n, c_ + static_cast<int64_t>(i) * s_.m * s_.n,
                s_.n);
    }
    return absl::OkStatus();
  }

 private:
  const BatchedShape s_;
  const GemmF32 gemm_;
  const float* a_;
  const float* b_;
  float* c_;
};

bool Legal(const OpQuery& q) {
  BatchedShape s;
  return ResolveShape(q, false, &s);
}

// The GEMM's own estimate per batch (it packs B on every call) and a fixed cost per call.
double Cost(const OpQuery& q) {
  BatchedShape s;
  if (!ResolveShape(q, false, &s)) return 1e9;
  const double batches = static_cast<double>(q.output(0).NumElements() / (s.m * s.n));
  return batches * (static_cast<double>(s.m * s.n * s.k) / 50e9 + static_cast<double>(s.k * s.n) * 8 / 20e9 + 0.2e-6);
}

absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
  BatchedShape s;
  if (!ResolveShape(BoundOperands(args).query(), true, &s)) {
    return absl::InvalidArgumentError(absl::StrCat("node '", args.node.name(),
                                                   "': the batched MatMul kernel does not serve it (it needs f32, "
                                                   "static shapes of rank 2 or more, broadcastable batch axes)"));
  }
  absl::StatusOr<GemmF32> gemm = GemmF32::Create(s.m, s.n, s.k);
  if (!gemm.ok()) return gemm.status();
  return std::unique_ptr<OpKernel>(std::make_unique<BatchedMatMulKernel>(std::move(s), *std::move(gemm), args));
}

}  // namespace

void RegisterBatchedMatMulOpKernels(OpKernelRegistry& r) {
  r.Register(MakeOpKernelEntry("tessel_f32_batched_matmul__gemm", "MatMul", "f32", "row_major", Isa::kPortable, "gemm",
                               Legal, Cost, Create));
}

}  // namespace tessel
