/* Convolution helpers for the auto-vectorizer: im2col rows (channels last and channels first) that
 * feed tsl_f32_gemm_minmax__autovec, and a direct depthwise convolution over channels. */
#include <string.h>

#include "tessel_portable.h"

/* The input coordinate of window tap `t` at output position `o`, or -1 in the padding. */
static long tap(size_t o, size_t t, size_t stride, size_t dilation, size_t pad, size_t extent) {
  const long i = (long)(o * stride + t * dilation) - (long)pad;
  return i >= 0 && i < (long)extent ? i : -1;
}

void tsl_f32_im2col_nhwc_row__autovec(const tsl_window* win, const float* restrict x, size_t channels, size_t c0,
                                      size_t cg, size_t oy, float* restrict out) {
  for (size_t ox = 0; ox < win->ow; ++ox) {
    for (size_t ky = 0; ky < win->kh; ++ky) {
      const long iy = tap(oy, ky, win->stride_h, win->dilation_h, win->pad_top, win->h);
      for (size_t kx = 0; kx < win->kw; ++kx) {
        const long ix = tap(ox, kx, win->stride_w, win->dilation_w, win->pad_left, win->w);
        float* restrict dst = out + ((ox * win->kh + ky) * win->kw + kx) * cg;
        if (iy < 0 || ix < 0) {
          memset(dst, 0, cg * sizeof(float));
          continue;
        }
        /* A contiguous run of channels: GCC turns a copy loop into this call anyway. */
        memcpy(dst, x + ((size_t)iy * win->w + (size_t)ix) * channels + c0, cg * sizeof(float));
      }
    }
  }
}

void tsl_f32_im2col_nchw_row__autovec(const tsl_window* win, const float* restrict x, size_t c0, size_t cg, size_t oy,
                                      float* restrict out) {
  const size_t ow = win->ow;
  for (size_t c = 0; c < cg; ++c) {
    for (size_t ky = 0; ky < win->kh; ++ky) {
      const long iy = tap(oy, ky, win->stride_h, win->dilation_h, win->pad_top, win->h);
      for (size_t kx = 0; kx < win->kw; ++kx) {
        float* restrict dst = out + ((c * win->kh + ky) * win->kw + kx) * ow;
        if (iy < 0) {
          memset(dst, 0, ow * sizeof(float));
          continue;
        }
        /* Output columns whose tap lands inside the row: [first, last). */
        const long off = (long)(kx * win->dilation_w) - (long)win->pad_left;
        const long sw = (long)win->stride_w;
        size_t first = 0, last = ow;
        while (first < ow && (long)first * sw + off < 0) ++first;
        while (last > first && (long)(last - 1) * sw + off >= (long)win->w) --last;
        const float* restrict src = x + ((c0 + c) * win->h + (size_t)iy) * win->w;
        for (size_t o = 0; o < first; ++o) dst[o] = 0.0f;
        for (size_t o = last; o < ow; ++o) dst[o] = 0.0f;
        if (sw == 1) {
          if (last > first) memcpy(dst + first, src + (long)first + off, (last - first) * sizeof(float));
        } else {
          for (size_t o = first; o < last; ++o) dst[o] = src[(long)o * sw + off];
        }
      }
    }
  }
}

void tsl_f32_dwconv_nhwc_minmax__autovec(const tsl_window* win, size_t channels, const float* restrict x,
                                         const float* restrict w, const float* restrict bias,
                                         const float* restrict r, size_t oy0, size_t oy1, float* restrict y,
                                         float lo, float hi) {
  for (size_t oy = oy0; oy < oy1; ++oy) {
    for (size_t ox = 0; ox < win->ow; ++ox) {
      float* restrict acc = y + ((oy - oy0) * win->ow + ox) * channels;
      if (bias) {
        memcpy(acc, bias, channels * sizeof(float));
      } else {
        memset(acc, 0, channels * sizeof(float));
      }
      for (size_t ky = 0; ky < win->kh; ++ky) {
        const long iy = tap(oy, ky, win->stride_h, win->dilation_h, win->pad_top, win->h);
        if (iy < 0) continue;
        for (size_t kx = 0; kx < win->kw; ++kx) {
          const long ix = tap(ox, kx, win->stride_w, win->dilation_w, win->pad_left, win->w);
          if (ix < 0) continue;
          const float* restrict xp = x + ((size_t)iy * win->w + (size_t)ix) * channels;
          const float* restrict wp = w + (ky * win->kw + kx) * channels;
          // tessel:hot
#pragma omp simd
          for (size_t c = 0; c < channels; ++c) acc[c] += xp[c] * wp[c];
        }
      }
      if (r) {
        const float* restrict rp = r + ((oy - oy0) * win->ow + ox) * channels;
        // tessel:hot
#pragma omp simd
        for (size_t c = 0; c < channels; ++c) {
          const float v = acc[c] + rp[c];
          acc[c] = v < lo ? lo : (v > hi ? hi : v);
        }
      } else {
        // tessel:hot
#pragma omp simd
        for (size_t c = 0; c < channels; ++c) {
          const float v = acc[c];
          acc[c] = v < lo ? lo : (v > hi ? hi : v);
        }
      }
    }
  }
}
