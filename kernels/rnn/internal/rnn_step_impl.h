// The step kernels of rnn_step.h as portable C++, included once by each per-ISA source file
// (rnn_step_autovec.cc, rnn_step_avx2.cc, rnn_step_avx512.cc), which compiles them with that ISA's
// flags: GCC vectorizes the gate loops (tsl_sigmoidf is inlined) and keeps the GEMV's kPanel
// accumulators in vector registers (GCC vector extensions, split into the widest registers the ISA
// has). Everything here has internal linkage, so each file holds its own copy.
#ifndef TESSEL_KERNELS_RNN_INTERNAL_RNN_STEP_IMPL_H_
#define TESSEL_KERNELS_RNN_INTERNAL_RNN_STEP_IMPL_H_

#include <cstdint>
#include <cstring>

#include "kernels/portable/tessel_portable.h"
#include "kernels/rnn/internal/rnn_step.h"

namespace tessel {
namespace rnn_internal {
namespace {

typedef float Vec8 __attribute__((vector_size(32)));
constexpr int kVecs = static_cast<int>(kPanel / 8);

inline Vec8 Load8(const float* p) {
  Vec8 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline void Store8(float* p, Vec8 v) { std::memcpy(p, &v, sizeof(v)); }

inline float Clip(float v, float clip) { return v < -clip ? -clip : (v > clip ? clip : v); }

// tanh(x) = 2 sigmoid(2x) - 1: the same polynomial as the sigmoid, absolute error about 1e-7.
inline float Tanh(float x) { return 2.0f * tsl_sigmoidf(2.0f * x) - 1.0f; }

void Gemv(int64_t n, int64_t k, const float* packed, const float* h, const float* init, float* y) {
  for (int64_t j0 = 0; j0 < n; j0 += kPanel) {
    Vec8 acc[kVecs];
    for (int v = 0; v < kVecs; ++v) acc[v] = Load8(init + j0 + 8 * v);
    const float* w = packed + j0 * k;
    for (int64_t p = 0; p < k; ++p, w += kPanel) {
      const float hp = h[p];
      for (int v = 0; v < kVecs; ++v) acc[v] += hp * Load8(w + 8 * v);
    }
    for (int v = 0; v < kVecs; ++v) Store8(y + j0 + 8 * v, acc[v]);
  }
}

void LstmGates(int64_t hidden, const float* pre, float clip, float* c, float* h) {
  const float* pi = pre;
  const float* po = pre + hidden;
  const float* pf = pre + 2 * hidden;
  const float* pc = pre + 3 * hidden;
#pragma omp simd
  for (int64_t j = 0; j < hidden; ++j) {
    const float i = tsl_sigmoidf(Clip(pi[j], clip));
    const float o = tsl_sigmoidf(Clip(po[j], clip));
    const float f = tsl_sigmoidf(Clip(pf[j], clip));
    const float g = Tanh(Clip(pc[j], clip));
    const float cj = f * c[j] + i * g;
    c[j] = cj;
    h[j] = o * Tanh(cj);
  }
}

void GruReset(int64_t hidden, const float* pre, float clip, const float* h, float* z, float* r, float* rh) {
#pragma omp simd
  for (int64_t j = 0; j < hidden; ++j) {
    z[j] = tsl_sigmoidf(Clip(pre[j], clip));
    const float rj = tsl_sigmoidf(Clip(pre[hidden + j], clip));
    r[j] = rj;
    rh[j] = rj * h[j];
  }
}

void GruUpdate(int64_t hidden, const float* xn, const float* yn, const float* z, const float* r, float clip,
               float* h) {
  if (r != nullptr) {
#pragma omp simd
    for (int64_t j = 0; j < hidden; ++j) {
      const float n = Tanh(Clip(xn[j] + r[j] * yn[j], clip));
      h[j] = n + z[j] * (h[j] - n);
    }
  } else {
#pragma omp simd
    for (int64_t j = 0; j < hidden; ++j) {
      const float n = Tanh(Clip(xn[j] + yn[j], clip));
      h[j] = n + z[j] * (h[j] - n);
    }
  }
}

constexpr RnnStepKernels kStepKernels = {Gemv, LstmGates, GruReset, GruUpdate};

}  // namespace
}  // namespace rnn_internal
}  // namespace tessel

#endif  // TESSEL_KERNELS_RNN_INTERNAL_RNN_STEP_IMPL_H_
