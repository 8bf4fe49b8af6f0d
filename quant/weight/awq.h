// AWQ (Lin et al., 2023): activation-aware weight quantization. Input channels that see large
// activations matter more, so each channel's weights are scaled up by s = mean|x|^alpha before
// quantization (and the input divided by s, folded into the op that produces it); alpha is searched on a
// grid to minimize the layer's output error. An optional search then clips each group's range.
#ifndef TESSEL_QUANT_WEIGHT_AWQ_H_
#define TESSEL_QUANT_WEIGHT_AWQ_H_

#include <cstdint>
#include <vector>

#include "quant/weight/scheme.h"

namespace tessel::quant {

struct AwqOptions {
  int grid = 20;        // alpha = i / grid for i < grid (alpha 0 is plain RTN)
  int clip_grid = 20;   // clip ratios 1 - i / clip_grid down to 0.5
};

// A matrix [rows, cols] row-major whose input is the shared activation.
struct AwqLinear {
  const float* w;
  int64_t rows;
};

struct AwqScaleResult {
  std::vector<float> scales;  // [cols]: multiply weight columns, divide the input channels
  float alpha = 0;
  double loss = 0;       // output squared error with the chosen scales
  double rtn_loss = 0;   // the same without scaling (alpha = 0)
};

// x: [n, cols] sample inputs; mean_abs: mean |x| per input channel over all calibration tokens.
// `tie`, if not empty, maps each channel to a scale slot (channels sharing a slot get one scale, the
// mean of their statistics): the GQA case where one V channel feeds several output-projection channels.
AwqScaleResult AwqSearchScales(const float* x, int64_t n, int64_t cols, const std::vector<AwqLinear>& linears,
                               const std::vector<float>& mean_abs, const std::vector<int>& tie,
                               const QuantScheme& scheme, const AwqOptions& options);

// Per (row, group) range fractions minimizing each group's output error sum_t (x_t,g . (w_g - q_g))^2
// over the sample inputs x [n, cols]; the input to RtnQuantize's `clip`.
std::vector<float> AwqSearchClip(const float* x, int64_t n, const float* w, int64_t rows, int64_t cols,
                                 const QuantScheme& scheme, const AwqOptions& options);

// Folding: the scaled model computes the same function in f32. Weight matrices are [rows, cols]
// row-major.
// A norm gain feeding `next` (each with `cols` inputs): gain /= s, next's columns *= s.
void FoldScalesIntoNorm(std::vector<float>* gain, const std::vector<std::vector<float>*>& next, int64_t cols,
                        const std::vector<float>& s);
// A linear `prev` whose output rows feed `next`'s input channels linearly (through attention's
// value mixing, or the SwiGLU product with the up projection): next's column c *= s[c], and prev's row
// tie[c] (c itself when tie is empty) /= s[c]. Channels tied to one row must share a scale.
void FoldScalesIntoLinear(std::vector<float>* prev, int64_t prev_cols, std::vector<float>* next, int64_t next_cols,
                          const std::vector<float>& s, const std::vector<int>& tie);

}  // namespace tessel::quant

#endif  // TESSEL_QUANT_WEIGHT_AWQ_H_
