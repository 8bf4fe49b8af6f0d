/* Max, average and global average pooling over channels-last images for the auto-vectorizer: the
 * inner loop runs over channels, contiguous in NHWC. */
#include <string.h>

#include "tessel_portable.h"
#include "window.h"

/* Taps of the window at `o` inside the padded extent [-pad_begin, extent + pad_end). */
static size_t padded_taps(size_t o, size_t k, size_t stride, size_t dilation, size_t pad_begin, size_t pad_end,
                          size_t extent) {
  size_t count = 0;
  for (size_t t = 0; t < k; ++t) {
    const long i = (long)(o * stride + t * dilation) - (long)pad_begin;
    count += i >= -(long)pad_begin && i < (long)(extent + pad_end);
  }
  return count;
}

void tsl_f32_maxpool_nhwc__autovec(const tsl_window* win, size_t channels, const float* restrict x,
                                   float* restrict y) {
  for (size_t oy = 0; oy < win->oh; ++oy) {
    for (size_t ox = 0; ox < win->ow; ++ox) {
      float* restrict out = y + (oy * win->ow + ox) * channels;
      for (size_t c = 0; c < channels; ++c) out[c] = -__builtin_inff();
      for (size_t ky = 0; ky < win->kh; ++ky) {
        const long iy = tsl_tap(oy, ky, win->stride_h, win->dilation_h, win->pad_top, win->h);
        if (iy < 0) continue;
        for (size_t kx = 0; kx < win->kw; ++kx) {
          const long ix = tsl_tap(ox, kx, win->stride_w, win->dilation_w, win->pad_left, win->w);
          if (ix < 0) continue;
          const float* restrict in = x + ((size_t)iy * win->w + (size_t)ix) * channels;
          // tessel:hot
#pragma omp simd
          for (size_t c = 0; c < channels; ++c) out[c] = in[c] > out[c] ? in[c] : out[c];
        }
      }
    }
  }
}

void tsl_f32_avgpool_nhwc__autovec(const tsl_window* win, size_t channels, int count_include_pad,
                                   const float* restrict x, float* restrict y) {
  for (size_t oy = 0; oy < win->oh; ++oy) {
    const size_t pad_rows = padded_taps(oy, win->kh, win->stride_h, win->dilation_h, win->pad_top, win->pad_bottom, win->h);
    for (size_t ox = 0; ox < win->ow; ++ox) {
      float* restrict out = y + (oy * win->ow + ox) * channels;
      memset(out, 0, channels * sizeof(float));
      size_t count = 0;
      for (size_t ky = 0; ky < win->kh; ++ky) {
        const long iy = tsl_tap(oy, ky, win->stride_h, win->dilation_h, win->pad_top, win->h);
        if (iy < 0) continue;
        for (size_t kx = 0; kx < win->kw; ++kx) {
          const long ix = tsl_tap(ox, kx, win->stride_w, win->dilation_w, win->pad_left, win->w);
          if (ix < 0) continue;
          ++count;
          const float* restrict in = x + ((size_t)iy * win->w + (size_t)ix) * channels;
          // tessel:hot
#pragma omp simd
          for (size_t c = 0; c < channels; ++c) out[c] += in[c];
        }
      }
      if (count_include_pad) {
        count = pad_rows * padded_taps(ox, win->kw, win->stride_w, win->dilation_w, win->pad_left, win->pad_right, win->w);
      }
      const float scale = count ? 1.0f / (float)count : 0.0f;
      // tessel:hot
#pragma omp simd
      for (size_t c = 0; c < channels; ++c) out[c] *= scale;
    }
  }
}

void tsl_f32_global_avgpool_nhwc__autovec(size_t pixels, size_t channels, const float* restrict x,
                                          float* restrict y) {
  memset(y, 0, channels * sizeof(float));
  for (size_t p = 0; p < pixels; ++p) {
    const float* restrict in = x + p * channels;
    // tessel:hot
#pragma omp simd
    for (size_t c = 0; c < channels; ++c) y[c] += in[c];
  }
  const float scale = 1.0f / (float)pixels;
  // tessel:hot
#pragma omp simd
  for (size_t c = 0; c < channels; ++c) y[c] *= scale;
}

void tsl_f32_row_mean__autovec(size_t rows, size_t n, const float* restrict x, float* restrict y) {
  for (size_t i = 0; i < rows; ++i) {
    const float* restrict xi = x + i * n;
    float sum = 0.0f;
    // tessel:hot
#pragma omp simd reduction(+ : sum)
    for (size_t j = 0; j < n; ++j) sum += xi[j];
    y[i] = sum / (float)n;
  }
}
