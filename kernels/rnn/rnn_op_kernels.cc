// LSTM and GRU on a prepacked input-projection GEMM and per-step recurrent GEMVs. The recurrence is
// serial in time, and at batch 1 a step is a few thousand multiply-adds, so the kernel runs on the
// calling thread: a parallel region per step would cost more than the step.
#include "kernels/rnn/rnn_op_kernels.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/ops/nn_params.h"
#include "kernels/gemm/gemm.h"
#include "kernels/registry/bound_operands.h"
#include "kernels/rnn/internal/rnn_step.h"

namespace tessel {
namespace {

using rnn_internal::kPanel;
using rnn_internal::RnnStepKernels;

int64_t RoundUp(int64_t n) { return (n + kPanel - 1) / kPanel * kPanel; }

// A node the fast path serves, resolved from its attributes and operand types.
struct RnnShape {
  RnnParams p;
  bool lstm = false;
  int64_t seq = 0, batch = 0, in = 0, hidden = 0, dirs = 1;
  int64_t gates_hidden() const { return p.gates * hidden; }
};

bool IsF32Static(const TensorType& t) { return t.dtype == DType::kF32 && t.is_static(); }

// Whether the fast path serves the node (an LSTM when `lstm`, else a GRU), filling `s`. Shapes that
// shape inference would have refused are refused here too, so that Create can trust them.
bool ResolveShape(const OpQuery& q, bool lstm, RnnShape* s) {
  if (!q.has_input(0) || !q.has_input(1) || !q.has_input(2)) return false;
  for (int i : {0, 1, 2, 3, 5, 6}) {
    if (q.has_input(i) && !IsF32Static(q.input(i))) return false;
  }
  // Weights are packed at creation; peepholes (LSTM input 7) are left to the reference kernel.
  if (!q.inputs[1].constant || !q.inputs[2].constant || (q.has_input(3) && !q.inputs[3].constant)) return false;
  if (q.has_input(7)) return false;
  if (q.has_input(4) && (!q.input(4).is_static() ||
                         (q.input(4).dtype != DType::kI32 && q.input(4).dtype != DType::kI64))) {
    return false;
  }
  if (q.outputs.empty() || static_cast<int>(q.outputs.size()) > (lstm ? 3 : 2)) return false;
  for (const OperandInfo& o : q.outputs) {
    if (!IsF32Static(o.type)) return false;
  }
  absl::StatusOr<RnnParams> p = ResolveRnnParams(q.node, q.input(0).dims, q.input(1).dims, q.input(2).dims);
  if (!p.ok() || p->gates != (lstm ? 4 : 3) || !p->hidden.is_static()) return false;
  const RnnActivation defaults[] = {RnnActivation::kSigmoid, RnnActivation::kTanh, RnnActivation::kTanh};
  for (const std::vector<RnnActivation>& acts : p->activations) {
    for (size_t i = 0; i < acts.size(); ++i) {
      if (acts[i] != defaults[i]) return false;
    }
  }
  s->p = *p;
  s->lstm = lstm;
  const std::vector<Dim>& x = q.input(0).dims;
  s->seq = x[p->batch_first ? 1 : 0].value();
  s->batch = x[p->batch_first ? 0 : 1].value();
  s->in = x[2].value();
  s->hidden = p->hidden.value();
  s->dirs = p->directions;
  if (s->seq < 1 || s->batch < 1 || s->in < 1 || s->hidden < 1) return false;
  const int64_t gh = s->gates_hidden(), state = s->dirs * s->batch * s->hidden;
  if (q.input(1).NumElements() != s->dirs * gh * s->in || q.input(2).NumElements() != s->dirs * gh * s->hidden) {
    return false;
  }
  if (q.has_input(3) && q.input(3).NumElements() != s->dirs * 2 * gh) return false;
  if (q.has_input(4) && q.input(4).NumElements() != s->batch) return false;
  for (int i : {5, 6}) {
    if (q.has_input(i) && q.input(i).NumElements() != state) return false;
  }
  if (q.output(0).NumElements() != s->seq * state) return false;
  for (size_t i = 1; i < q.outputs.size(); ++i) {
    if (q.output(i).NumElements() != state) return false;
  }
  return true;
}

// R[row_begin, row_end) of one direction's R [gates * hidden x hidden], transposed into panels of kPanel
// columns (rnn_step.h's RnnGemvFn layout), zero past the last row.
std::vector<float> PackRecurrent(const float* r, int64_t hidden, int64_t row_begin, int64_t row_end) {
  const int64_t n = RoundUp(row_end - row_begin);
  std::vector<float> packed(static_cast<size_t>(n * hidden), 0.0f);
  for (int64_t j = 0; j < row_end - row_begin; ++j) {
    const int64_t panel = j / kPanel, col = j % kPanel;
    const float* row = r + (row_begin + j) * hidden;
    for (int64_t p = 0; p < hidden; ++p) packed[static_cast<size_t>((panel * hidden + p) * kPanel + col)] = row[p];
  }
  return packed;
}

class RecurrentKernel : public OpKernel {
 public:
  RecurrentKernel(const RnnShape& s, RnnStepKernels k) : s_(s), k_(k) {}

  absl::Status Init(const OpKernelArgs& args) {
    const int64_t h = s_.hidden, gh = s_.gates_hidden();
    ldx_ = RoundUp(gh);
    x_ = args.inputs[0]->data<float>();
    lens_ = args.inputs.size() > 4 ? args.inputs[4] : nullptr;
    init_h_ = args.inputs.size() > 5 && args.inputs[5] ? args.inputs[5]->data<float>() : nullptr;
    init_c_ = args.inputs.size() > 6 && args.inputs[6] ? args.inputs[6]->data<float>() : nullptr;
    y_ = args.outputs[0].data<float>();
    y_h_ = args.outputs.size() > 1 ? args.outputs[1].data<float>() : nullptr;
    y_c_ = args.outputs.size() > 2 ? args.outputs[2].data<float>() : nullptr;
    clip_ = s_.p.clip > 0 ? s_.p.clip : std::numeric_limits<float>::infinity();
    const float* bias = args.inputs.size() > 3 && args.inputs[3] ? args.inputs[3]->data<float>() : nullptr;
    size_t workspace = 0;
    std::vector<float> wt(static_cast<size_t>(s_.in * gh));
    for (int64_t d = 0; d < s_.dirs; ++d) {
      Direction dir;
      // The input projection's weights W^T [in x gates * hidden], and its bias: W's and, where they
      // add outside a gate's product, R's (all of LSTM's; GRU's z and r, not R_n's under the reset).
      const float* w = args.inputs[1]->data<float>() + d * gh * s_.in;
      for (int64_t j = 0; j < gh; ++j) {
        for (int64_t p = 0; p < s_.in; ++p) wt[static_cast<size_t>(p * gh + j)] = w[j * s_.in + p];
      }
      absl::StatusOr<PackedGemmF32> proj = PackedGemmF32::Create(gh, s_.in, wt.data(), gh, s_.seq * s_.batch);
      if (!proj.ok()) return proj.status();
      dir.proj = *std::move(proj);
      workspace = std::max(workspace, dir.proj.workspace_bytes());
      dir.proj_bias.assign(static_cast<size_t>(gh), 0.0f);
      dir.rn_bias.assign(static_cast<size_t>(RoundUp(h)), 0.0f);
      if (bias != nullptr) {
        const float* wb = bias + d * 2 * gh;
        const float* rb = wb + gh;
        for (int64_t j = 0; j < gh; ++j) dir.proj_bias[j] = wb[j] + (s_.lstm || j < 2 * h ? rb[j] : 0.0f);
        if (!s_.lstm) std::copy(rb + 2 * h, rb + 3 * h, dir.rn_bias.begin());
      }
      const float* r = args.inputs[2]->data<float>() + d * gh * h;
      dir.r_packed = PackRecurrent(r, h, 0, s_.lstm ? gh : 2 * h);
      if (!s_.lstm) dir.rn_packed = PackRecurrent(r, h, 2 * h, 3 * h);
      dirs_.push_back(std::move(dir));
    }
    xw_.assign(static_cast<size_t>(s_.seq * s_.batch * ldx_), 0.0f);
    workspace_ = Buffer::Allocate(std::max<size_t>(workspace, 64));
    pre_.assign(static_cast<size_t>(ldx_), 0.0f);
    const size_t hp = static_cast<size_t>(RoundUp(h));
    h_.assign(hp, 0.0f);
    c_.assign(hp, 0.0f);
    z_.assign(hp, 0.0f);
    r_.assign(hp, 0.0f);
    rh_.assign(hp, 0.0f);
    yn_.assign(hp, 0.0f);
    return absl::OkStatus();
  }

  absl::Status Run() override {
    const int64_t h = s_.hidden, seq = s_.seq, batch = s_.batch, dirs = s_.dirs;
    const bool bf = s_.p.batch_first;
    if (lens_ != nullptr) {
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t len = lens_->GetAsInt64(b);
        if (len < 0 || len > seq) {
          return absl::OutOfRangeError(absl::StrCat(s_.lstm ? "LSTM" : "GRU", ": sequence_lens[", b, "] = ", len,
                                                    " is outside [0, ", seq, "]"));
        }
      }
      // Steps past a row's sequence length leave zeros in Y.
      std::fill(y_, y_ + seq * dirs * batch * h, 0.0f);
    }
    for (int64_t d = 0; d < dirs; ++d) {
      const Direction& dir = dirs_[d];
      GemmEpilogue epilogue;
      epilogue.bias = dir.proj_bias.data();
      dir.proj.Run(seq * batch, x_, s_.in, xw_.data(), ldx_, epilogue, 0, s_.gates_hidden(), workspace_->data());
      const bool reverse = s_.p.reverse || d == 1;
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t len = lens_ != nullptr ? lens_->GetAsInt64(b) : seq;
        const int64_t state = (bf ? b * dirs + d : d * batch + b) * h;
        if (init_h_ != nullptr) {
          std::copy(init_h_ + state, init_h_ + state + h, h_.begin());
        } else {
          std::fill(h_.begin(), h_.end(), 0.0f);
        }
        if (init_c_ != nullptr) {
          std::copy(init_c_ + state, init_c_ + state + h, c_.begin());
        } else {
          std::fill(c_.begin(), c_.end(), 0.0f);
        }
        for (int64_t step = 0; step < len; ++step) {
          const int64_t t = reverse ? len - 1 - step : step;
          const float* xw = xw_.data() + (bf ? b * seq + t : t * batch + b) * ldx_;
          if (s_.lstm) {
            k_.gemv(ldx_, h, dir.r_packed.data(), h_.data(), xw, pre_.data());
            k_.lstm_gates(h, pre_.data(), clip_, c_.data(), h_.data());
          } else {
            const bool lbr = s_.p.linear_before_reset;
            k_.gemv(RoundUp(2 * h), h, dir.r_packed.data(), h_.data(), xw, pre_.data());
            k_.gru_reset(h, pre_.data(), clip_, h_.data(), z_.data(), r_.data(), rh_.data());
            k_.gemv(RoundUp(h), h, dir.rn_packed.data(), lbr ? h_.data() : rh_.data(), dir.rn_bias.data(), yn_.data());
            k_.gru_update(h, xw + 2 * h, yn_.data(), z_.data(), lbr ? r_.data() : nullptr, clip_, h_.data());
          }
          float* y = y_ + (bf ? (b * seq + t) * dirs + d : (t * dirs + d) * batch + b) * h;
          std::copy(h_.begin(), h_.begin() + h, y);
        }
        if (y_h_ != nullptr) std::copy(h_.begin(), h_.begin() + h, y_h_ + state);
        if (y_c_ != nullptr) std::copy(c_.begin(), c_.begin() + h, y_c_ + state);
      }
    }
    return absl::OkStatus();
  }

 private:
  struct Direction {
    PackedGemmF32 proj;            // X W^T for every step at once
    std::vector<float> proj_bias;  // gates * hidden
    std::vector<float> r_packed;   // LSTM: all four gates; GRU: z and r
    std::vector<float> rn_packed;  // GRU: the candidate's R_n
    std::vector<float> rn_bias;    // GRU: Rb_n, padded to kPanel
  };

  const RnnShape s_;
  const RnnStepKernels k_;
  int64_t ldx_ = 0;  // row stride of xw_ and the GEMV's padded output width
  const float* x_ = nullptr;
  const Tensor* lens_ = nullptr;
  const float* init_h_ = nullptr;
  const float* init_c_ = nullptr;
  float* y_ = nullptr;
  float* y_h_ = nullptr;
  float* y_c_ = nullptr;
  float clip_ = 0;
  std::vector<Direction> dirs_;
  std::vector<float> xw_;  // [seq * batch rows in X's order][ldx_]: the projections of one direction
  std::shared_ptr<Buffer> workspace_;
  // One step's buffers, each padded to kPanel: gate pre-activations and states.
  std::vector<float> pre_, h_, c_, z_, r_, rh_, yn_;
};

template <bool kLstm>
bool Legal(const OpQuery& q) {
  RnnShape s;
  return ResolveShape(q, kLstm, &s);
}

// Multiply-adds per second of the step kernels and the GEMM beside them, and the fixed cost of a
// step (calls, the gates' short loops): estimates that rank these entries among themselves; any of them
// beats the reference kernel's double-precision loop (priced at 1.5 ns per multiply-add).
template <bool kLstm, int kMacsPerNs>
double Cost(const OpQuery& q) {
  RnnShape s;
  if (!ResolveShape(q, kLstm, &s)) return 1e9;
  const double steps = static_cast<double>(s.dirs * s.seq * s.batch);
  const double macs = steps * static_cast<double>(s.gates_hidden() * (s.in + s.hidden));
  return macs / (kMacsPerNs * 1e9) + steps * 30e-9;
}

template <bool kLstm, RnnStepKernels (*kStep)()>
absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
  BoundOperands operands(args);
  for (int i : {1, 2, 3}) {
    if (i < static_cast<int>(operands.inputs.size())) operands.inputs[i].constant = true;  // packed here
  }
  RnnShape s;
  if (!ResolveShape(operands.query(), kLstm, &s)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node '", args.node.name(), "': the fast ", args.node.op_type(),
        " kernel does not serve it (it needs f32, constant W, R and B, static shapes, default activations and "
        "no peepholes)"));
  }
  auto kernel = std::make_unique<RecurrentKernel>(s, kStep());
  if (absl::Status st = kernel->Init(args); !st.ok()) return st;
  return std::unique_ptr<OpKernel>(std::move(kernel));
}

template <bool kLstm, RnnStepKernels (*kStep)(), int kMacsPerNs>
OpKernelEntry Entry(const char* isa_name, Isa isa, const char* backend) {
  return MakeOpKernelEntry(absl::StrCat("tessel_f32_", kLstm ? "lstm" : "gru", "__", isa_name), kLstm ? "LSTM" : "GRU",
                           "f32", "any", isa, backend, Legal<kLstm>, Cost<kLstm, kMacsPerNs>, Create<kLstm, kStep>);
}

}  // namespace

void RegisterRnnOpKernels(OpKernelRegistry& r) {
  r.Register(Entry<true, rnn_internal::RnnStepAutovec, 4>("autovec", Isa::kPortable, "portable"));
  r.Register(Entry<false, rnn_internal::RnnStepAutovec, 4>("autovec", Isa::kPortable, "portable"));
#if defined(__x86_64__)
  r.Register(Entry<true, rnn_internal::RnnStepAvx2, 12>("avx2", Isa::kAvx2, "x86"));
  r.Register(Entry<false, rnn_internal::RnnStepAvx2, 12>("avx2", Isa::kAvx2, "x86"));
  r.Register(Entry<true, rnn_internal::RnnStepAvx512, 16>("avx512", Isa::kAvx512, "x86"));
  r.Register(Entry<false, rnn_internal::RnnStepAvx512, 16>("avx512", Isa::kAvx512, "x86"));
#endif
}

}  // namespace tessel
