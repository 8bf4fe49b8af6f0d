// Batch-1 fully connected layers (a classifier's weights, read once per run): y = W x + b as a GEMV
// over weights packed in panels of 16 outputs, k-major ([ceil(n / 16)][k][16], zero-padded). Such a
// layer is bound by reading W from memory, and one core reads faster from several streams than from
// the one a panel-by-panel walk is: the AVX-512 kernel runs 4 panels in lockstep from 4 parts of its
// range (as the LLM decode GEMVs do). MobileNetV2's classifier (1280 x 1000, 5 MB), Zen 4, 1 thread,
// caches flushed before each run: XNNPACK's fully connected 0.30-0.35 ms, 1 stream 0.33-0.37, 2 streams
// 0.30, 4 streams 0.26 (8: 0.27). `gemm_benchmark --benchmark_filter=_fc/` (the "fc_gemv" rows):
// mbv2_fc cold 0.238 vs XNNPACK 0.306 ms, warm 0.057 vs 0.089; ResNet-18's 2 MB r18_fc cold 0.091 vs
// 0.086, warm 0.022 vs 0.033.
#ifndef TESSEL_KERNELS_CONV_FC_GEMV_H_
#define TESSEL_KERNELS_CONV_FC_GEMV_H_

#include <cstdint>

namespace tessel {

// packed[((j / 16) * k + p) * 16 + j % 16] = W[j, p] for j < n, p < k, where W is w as [n, k] (weights_nk)
// or as [k, n]; packed holds ceil(n / 16) * 16 * k floats and its padding must already be zero.
inline void PackFcGemvPanels(const float* w, int64_t n, int64_t k, bool weights_nk, float* packed) {
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t p = 0; p < k; ++p) packed[((j / 16) * k + p) * 16 + j % 16] = weights_nk ? w[j * k + p] : w[p * n + j];
  }
}

#if defined(__x86_64__)
// y[j] = bias[j] + sum_p x[p] * W[j, p] for the outputs of panels [panel_begin, panel_end), j < n.
// packed: 64-byte aligned panels; bias: ceil(n / 16) * 16 floats, 64-byte aligned. Needs AVX-512F.
void tessel_f32_gemv_panel16__avx512(const float* packed, int64_t k, const float* x, const float* bias, int64_t n,
                                     int64_t panel_begin, int64_t panel_end, float* y);
#endif

}  // namespace tessel

#endif  // TESSEL_KERNELS_CONV_FC_GEMV_H_
