// Reference kernels for the recurrent operators (RNN, GRU, LSTM): the ONNX
// equations step by step in double, one batch row at a time so that each row
// runs for its own sequence length.
#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/ops/nn_params.h"
#include "kernels/reference/reference.h"

namespace tessel {
namespace {

using Inputs = absl::Span<const Tensor* const>;

const Tensor* In(Inputs inputs, int i) { return i < static_cast<int>(inputs.size()) ? inputs[i] : nullptr; }

double Activate(RnnActivation a, double v) {
  switch (a) {
    case RnnActivation::kSigmoid:
      return 1.0 / (1.0 + std::exp(-v));
    case RnnActivation::kTanh:
      return std::tanh(v);
    case RnnActivation::kRelu:
      return std::max(v, 0.0);
  }
  return v;
}

// out[0..rows) = m[rows x cols] * v + bias (bias may be nullptr), m row-major
// f32.
void MatVec(const float* m, int64_t rows, int64_t cols, const double* v, const float* bias, double* out) {
  for (int64_t r = 0; r < rows; ++r) {
    double acc = bias ? bias[r] : 0.0;
    const float* row = m + r * cols;
    for (int64_t c = 0; c < cols; ++c) acc += row[c] * v[c];
    out[r] = acc;
  }
}

absl::Status RnnKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  for (int i = 0; i < static_cast<int>(inputs.size()); ++i) {
    if (inputs[i] != nullptr && i != 4 && inputs[i]->dtype() != DType::kF32) {
      return absl::UnimplementedError(absl::StrCat("the reference ", node.op_type(),
                                                   " kernel supports f32 only; input ", i, " is ",
                                                   DTypeName(inputs[i]->dtype())));
    }
  }
  const Tensor& x = *inputs[0];
  const Tensor& w = *inputs[1];
  const Tensor& r = *inputs[2];
  const Tensor* bias = In(inputs, 3);
  const Tensor* lens = In(inputs, 4);
  const Tensor* init_h = In(inputs, 5);
  const Tensor* init_c = In(inputs, 6);
  const Tensor* peep = In(inputs, 7);
  absl::StatusOr<RnnParams> p = ResolveRnnParams(node, DimsOf(x.shape()), DimsOf(w.shape()), DimsOf(r.shape()));
  if (!p.ok()) return p.status();
  const bool lstm = p->gates == 4, gru = p->gates == 3;
  const int64_t seq = x.dim(p->batch_first ? 1 : 0), batch = x.dim(p->batch_first ? 0 : 1);
  const int64_t in_size = x.dim(2), hidden = p->hidden.value(), dirs = p->directions;
  const int64_t gh = p->gates * hidden;
  // Element offsets of X[t, b, :], Y[t, d, b, :] and a state [d, b, :] for
  // either layout.
  auto x_at = [&](int64_t t, int64_t b) { return (p->batch_first ? b * seq + t : t * batch + b) * in_size; };
  auto y_at = [&](int64_t t, int64_t d, int64_t b) {
    return (p->batch_first ? (b * seq + t) * dirs + d : (t * dirs + d) * batch + b) * hidden;
  };
  auto state_at = [&](int64_t d, int64_t b) { return (p->batch_first ? b * dirs + d : d * batch + b) * hidden; };
  Tensor* y = outputs.size() > 0 ? &outputs[0] : nullptr;
  Tensor* y_h = outputs.size() > 1 ? &outputs[1] : nullptr;
  Tensor* y_c = outputs.size() > 2 ? &outputs[2] : nullptr;
  // Steps past a row's sequence length leave zeros in Y.
  if (y != nullptr) std::fill(y->data<float>(), y->data<float>() + y->num_elements(), 0.0f);
  std::vector<double> h(hidden), c(hidden), xv(in_size), xw(gh), rh(gh), reset_h(hidden), candidate(hidden);
  for (int64_t d = 0; d < dirs; ++d) {
    const bool reverse = p->reverse || d == 1;
    const std::vector<RnnActivation>& act = p->activations[d];
    const float* wd = w.data<float>() + d * gh * in_size;
    const float* rd = r.data<float>() + d * gh * hidden;
    const float* wb = bias ? bias->data<float>() + d * 2 * gh : nullptr;
    const float* rb = bias ? wb + gh : nullptr;
    const float* pd = peep ? peep->data<float>() + d * 3 * hidden : nullptr;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = lens ? lens->GetAsInt64(b) : seq;
      if (len < 0 || len > seq) {
        return absl::OutOfRangeError(
            absl::StrCat(node.op_type(), ": sequence_lens[", b, "] = ", len, " is outside [0, ", seq, "]"));
      }
      for (int64_t j = 0; j < hidden; ++j) {
        h[j] = init_h ? init_h->data<float>()[state_at(d, b) + j] : 0.0;
        c[j] = init_c ? init_c->data<float>()[state_at(d, b) + j] : 0.0;
      }
      auto clip = [&](double v) { return p->clip > 0 ? std::clamp<double>(v, -p->clip, p->clip) : v; };
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = reverse ? len - 1 - step : step;
        const float* xt = x.data<float>() + x_at(t, b);
        for (int64_t i = 0; i < in_size; ++i) xv[i] = xt[i];
        MatVec(wd, gh, in_size, xv.data(), wb, xw.data());
        MatVec(rd, gh, hidden, h.data(), rb, rh.data());
        if (lstm) {
          // Gate blocks i, o, f, c; peepholes i, o, f.
          for (int64_t j = 0; j < hidden; ++j) {
            const double pi = pd ? pd[j] * c[j] : 0.0, pf = pd ? pd[2 * hidden + j] * c[j] : 0.0;
            const double ig = Activate(act[0], clip(xw[j] + rh[j] + pi));
            const double fg = Activate(act[0], clip(xw[2 * hidden + j] + rh[2 * hidden + j] + pf));
            const double cg = Activate(act[1], clip(xw[3 * hidden + j] + rh[3 * hidden + j]));
            c[j] = fg * c[j] + ig * cg;
            const double po = pd ? pd[hidden + j] * c[j] : 0.0;
            const double og = Activate(act[0], clip(xw[hidden + j] + rh[hidden + j] + po));
            h[j] = og * Activate(act[2], c[j]);
          }
        } else if (gru) {
          // Gate blocks z, r, h. Without linear_before_reset the candidate
          // multiplies R_h by (r * h).
          if (!p->linear_before_reset) {
            for (int64_t j = 0; j < hidden; ++j)
              reset_h[j] = Activate(act[0], clip(xw[hidden + j] + rh[hidden + j])) * h[j];
            MatVec(rd + 2 * hidden * hidden, hidden, hidden, reset_h.data(), rb ? rb + 2 * hidden : nullptr,
                   candidate.data());
          }
          for (int64_t j = 0; j < hidden; ++j) {
            const double z = Activate(act[0], clip(xw[j] + rh[j]));
            const double rg = Activate(act[0], clip(xw[hidden + j] + rh[hidden + j]));
            const double cand = p->linear_before_reset ? xw[2 * hidden + j] + rg * rh[2 * hidden + j]
                                                       : xw[2 * hidden + j] + candidate[j];
            const double hh = Activate(act[1], clip(cand));
            h[j] = (1 - z) * hh + z * h[j];
          }
        } else {
          for (int64_t j = 0; j < hidden; ++j) h[j] = Activate(act[0], clip(xw[j] + rh[j]));
        }
        if (y != nullptr) {
          float* yt = y->data<float>() + y_at(t, d, b);
          for (int64_t j = 0; j < hidden; ++j) yt[j] = static_cast<float>(h[j]);
        }
      }
      for (int64_t j = 0; j < hidden; ++j) {
        if (y_h != nullptr) y_h->data<float>()[state_at(d, b) + j] = static_cast<float>(h[j]);
        if (y_c != nullptr) y_c->data<float>()[state_at(d, b) + j] = static_cast<float>(c[j]);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterRnnReferenceKernels(ReferenceKernelRegistry& r) {
  r.Register("", "RNN", RnnKernel);
  r.Register("", "GRU", RnnKernel);
  r.Register("", "LSTM", RnnKernel);
}

}  // namespace tessel
