/* Portable f32 kernels written for the compiler's auto-vectorizer (C99, no intrinsics): the host-compiler
 * track beside the hand-written NEON/SVE/x86 kernels, and what the AOT C emitter's generated code calls.
 *
 * Vectorizer rules every kernel follows (kernels/VECTORIZATION.md shows why each matters):
 *   restrict on every pointer, unit-stride inner loops, no calls inside loops (tsl_expf is inlined),
 *   `#pragma omp simd` on the inner loop (build with -fopenmp-simd), and the loop that must vectorize
 *   marked `tessel:hot` on the line above, which check_vectorized.py enforces for x86-64, NEON and SVE.
 * Kernels never allocate and never fail; callers validate shapes once, ahead of time.
 * Names follow XNNPACK's scheme: what is computed, a double underscore, then how (`autovec`). */
#ifndef TESSEL_KERNELS_PORTABLE_TESSEL_PORTABLE_H_
#define TESSEL_KERNELS_PORTABLE_TESSEL_PORTABLE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define TSL_RESTRICT __restrict__
extern "C" {
#else
#define TSL_RESTRICT restrict
#endif

/* Buffers handed to the kernels by generated code are 64-byte aligned arena or weight slices. */
#define TSL_ALIGNMENT 64

/* exp(x) for f32 without a libm call, so loops around it vectorize: range reduction to
 * x = n*ln2 + r, |r| <= ln2/2 (n rounded with the 1.5*2^23 trick rather than a floorf call, which
 * is a libm call on baseline x86-64), a degree-6 polynomial for e^r and 2^n built in the exponent bits.
 * Max relative error about 2 ulp on [-87, 88]; x must already lie in that range. */
static inline float tsl_expf_in_range(float x) {
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = x - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  union {
    int32_t i;
    float f;
  } scale;
  scale.i = ((int32_t)n + 127) << 23;
  return p * scale.f;
}

#define TSL_EXPF_LO (-87.3365447504019f)
#define TSL_EXPF_HI 88.3762626647949f

/* exp(x), inputs clamped to [-87, 88]. */
static inline float tsl_expf(float x) {
  x = x > TSL_EXPF_HI ? TSL_EXPF_HI : x;
  x = x < TSL_EXPF_LO ? TSL_EXPF_LO : x;
  return tsl_expf_in_range(x);
}

/* The logistic function 1 / (1 + exp(-x)), from e = exp(-|x|) <= 1: one clamp instead of tsl_expf's
 * two. With two, GCC's jump threading gives each clamped range its own copy of the caller's loop
 * tail and evaluates all copies on every lane; for x * sigmoid(x) the out-of-range copy divides x by
 * exp(88), which produces subnormals and made SiLU 7x slower than Sigmoid on AVX2 and SSE. */
static inline float tsl_sigmoidf(float x) {
  float z = x < 0.0f ? x : -x;
  z = z < TSL_EXPF_LO ? TSL_EXPF_LO : z;
  const float e = tsl_expf_in_range(z);
  const float s = e / (1.0f + e);
  return x < 0.0f ? s : 1.0f - s;
}

/* ---- GEMM -------------------------------------------------------------------------------------
 * C[i][j] = clamp(sum_p A[i][p] * B[p][j] + bias_n[j] + bias_m[i] + R[i][j], lo, hi) for i < m, j < n.
 * A is m x k (row stride lda), B is k x n (row stride ldb, a packed weight panel or an im2col buffer),
 * bias_n / bias_m / r may be NULL. Register-blocked: 4 rows x 32 columns of accumulators. */
void tsl_f32_gemm_minmax__autovec(size_t m, size_t n, size_t k, const float* TSL_RESTRICT a, size_t lda,
                                  const float* TSL_RESTRICT b, size_t ldb, const float* TSL_RESTRICT bias_n,
                                  const float* TSL_RESTRICT bias_m, const float* TSL_RESTRICT r, size_t ldr,
                                  float* TSL_RESTRICT c, size_t ldc, float lo, float hi);

/* ---- Convolution helpers ----------------------------------------------------------------------
 * Geometry of a 2-D sliding window; input h x w, output oh x ow. pad_bottom / pad_right only matter
 * to average pooling with count_include_pad. */
typedef struct {
  size_t h, w, kh, kw, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left, pad_bottom, pad_right, oh, ow;
} tsl_window;

/* One output row `oy` of im2col for a channels-last image x[h][w][channels]: out[ow][kh][kw][cg] holds
 * channels [c0, c0 + cg) of each window position, zeros where the window is in the padding. */
void tsl_f32_im2col_nhwc_row__autovec(const tsl_window* win, const float* TSL_RESTRICT x, size_t channels,
                                      size_t c0, size_t cg, size_t oy, float* TSL_RESTRICT out);

/* One output row `oy` of im2col for a channels-first image x[channels][h][w], transposed for a
 * weights-on-the-left GEMM: out[cg][kh][kw][ow] for channels [c0, c0 + cg). */
void tsl_f32_im2col_nchw_row__autovec(const tsl_window* win, const float* TSL_RESTRICT x, size_t c0, size_t cg,
                                      size_t oy, float* TSL_RESTRICT out);

/* Depthwise convolution (channel multiplier 1), channels last, output rows [oy0, oy1):
 * y[oy][ox][c] = clamp(bias[c] + sum_{ky,kx} x[iy][ix][c] * w[ky][kx][c] + r[oy][ox][c], lo, hi), where
 * y and r point at row oy0 (so a one-row scratch buffer can receive a row). bias and r may be NULL.
 * Written for 3x3 (MobileNet) but any window works. */
void tsl_f32_dwconv_nhwc_minmax__autovec(const tsl_window* win, size_t channels, const float* TSL_RESTRICT x,
                                         const float* TSL_RESTRICT w, const float* TSL_RESTRICT bias,
                                         const float* TSL_RESTRICT r, size_t oy0, size_t oy1,
                                         float* TSL_RESTRICT y, float lo, float hi);

/* ---- Activations and elementwise --------------------------------------------------------------*/
void tsl_f32_clamp__autovec(size_t n, float* TSL_RESTRICT y, float lo, float hi);
void tsl_f32_hardswish__autovec(size_t n, float* TSL_RESTRICT y);
void tsl_f32_sigmoid__autovec(size_t n, float* TSL_RESTRICT y);
void tsl_f32_silu__autovec(size_t n, float* TSL_RESTRICT y);
/* y[i] = clamp(x[i] + bias[i % channels], lo, hi) over rows of `channels` (bias + relu/relu6/clip). */
void tsl_f32_bias_minmax__autovec(size_t rows, size_t channels, const float* TSL_RESTRICT x,
                                  const float* TSL_RESTRICT bias, float* TSL_RESTRICT y, float lo, float hi);
void tsl_f32_vadd__autovec(size_t n, const float* TSL_RESTRICT a, const float* TSL_RESTRICT b, float* TSL_RESTRICT y);
void tsl_f32_vmul__autovec(size_t n, const float* TSL_RESTRICT a, const float* TSL_RESTRICT b, float* TSL_RESTRICT y);

/* ---- Pooling (channels last; channels-first callers pass one plane at a time with channels = 1) ---
 * count_include_pad: the average divides by the window clipped to the padded image, else by the
 * number of input pixels under it (ONNX AveragePool semantics). */
void tsl_f32_maxpool_nhwc__autovec(const tsl_window* win, size_t channels, const float* TSL_RESTRICT x,
                                   float* TSL_RESTRICT y);
void tsl_f32_avgpool_nhwc__autovec(const tsl_window* win, size_t channels, int count_include_pad,
                                   const float* TSL_RESTRICT x, float* TSL_RESTRICT y);
/* y[c] = mean over pixels of x[pixels][c]. */
void tsl_f32_global_avgpool_nhwc__autovec(size_t pixels, size_t channels, const float* TSL_RESTRICT x,
                                          float* TSL_RESTRICT y);
/* y[i] = mean of row i of x[rows][n] (channels-first global average pooling). */
void tsl_f32_row_mean__autovec(size_t rows, size_t n, const float* TSL_RESTRICT x, float* TSL_RESTRICT y);

/* ---- Softmax and normalization, row by row over x[rows][n] ------------------------------------*/
float tsl_f32_rmax__autovec(size_t n, const float* TSL_RESTRICT x);
/* y[i] = exp(x[i] - max); returns the sum of y. */
float tsl_f32_exp_minus_max_sum__autovec(size_t n, const float* TSL_RESTRICT x, float max, float* TSL_RESTRICT y);
void tsl_f32_vscale__autovec(size_t n, float* TSL_RESTRICT y, float scale);
void tsl_f32_softmax__autovec(size_t rows, size_t n, const float* TSL_RESTRICT x, float* TSL_RESTRICT y);
/* y = x / sqrt(mean(x^2) + eps) * gain (gain may be NULL). */
void tsl_f32_rmsnorm__autovec(size_t rows, size_t n, const float* TSL_RESTRICT x, const float* TSL_RESTRICT gain,
                              float eps, float* TSL_RESTRICT y);

/* ---- Data movement ----------------------------------------------------------------------------
 * y = transpose of x with rank <= 6: y's axis d is x's axis perm[d]. */
void tsl_f32_transpose__scalar(size_t rank, const size_t* TSL_RESTRICT shape, const size_t* TSL_RESTRICT perm,
                               const float* TSL_RESTRICT x, float* TSL_RESTRICT y);

#ifdef __cplusplus
}
#endif

#endif /* TESSEL_KERNELS_PORTABLE_TESSEL_PORTABLE_H_ */
