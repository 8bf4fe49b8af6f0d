/* Convolution helpers for the auto-vectorizer: im2col rows (channels last and channels first) that
 * feed tsl_f32_gemm_minmax__autovec, and a direct depthwise convolution over channels. */
#include <string.h>

#include "tessel_portable.h"
#include "window.h"

void tsl_f32_im2col_nhwc_row__autovec(const tsl_window* win, const float* restrict x, size_t channels, size_t c0,
                                      size_t cg, size_t oy, float* restrict out) {
  for (size_t ox = 0; ox < win->ow; ++ox) {
    for (size_t ky = 0; ky < win->kh; ++ky) {
      const long iy = tsl_tap(oy, ky, win->stride_h, win->dilation_h, win->pad_top, win->h);
      for (size_t kx = 0; kx < win->kw; ++kx) {
        const long ix = tsl_tap(ox, kx, win->stride_w, win->dilation_w, win->pad_left, win->w);
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
      const long iy = tsl_tap(oy, ky, win->stride_h, win->dilation_h, win->pad_top, win->h);
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

#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>

enum { kDwMaxTaps = 64 };

/* One output pixel of the depthwise convolution with ACLE intrinsics: the window's in-bounds taps
 * listed once (x and w offsets), then per 16 channels (and per 4, then one at a time) the sums in
 * registers over every tap, the residual and the clamp, one store. The auto-vectorized loops of
 * tsl_f32_dwconv_nhwc_minmax__autovec, which add each tap into the output in memory, are its
 * reference twin and every other target's path. */
static void dw_pixel_neon(const tsl_window* win, size_t channels, const float* restrict x, const float* restrict w,
                          const float* restrict bias, const float* restrict rp, size_t oy, size_t ox,
                          float* restrict out, float lo, float hi) {
  size_t xo[kDwMaxTaps], wo[kDwMaxTaps], taps = 0;
  for (size_t ky = 0; ky < win->kh; ++ky) {
    const long iy = tsl_tap(oy, ky, win->stride_h, win->dilation_h, win->pad_top, win->h);
    if (iy < 0) continue;
    for (size_t kx = 0; kx < win->kw; ++kx) {
      const long ix = tsl_tap(ox, kx, win->stride_w, win->dilation_w, win->pad_left, win->w);
      if (ix < 0) continue;
      xo[taps] = ((size_t)iy * win->w + (size_t)ix) * channels;
      wo[taps] = (ky * win->kw + kx) * channels;
      ++taps;
    }
  }
  const float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
  size_t c = 0;
  for (; c + 16 <= channels; c += 16) {
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
    if (bias) {
      a0 = vld1q_f32(bias + c), a1 = vld1q_f32(bias + c + 4);
      a2 = vld1q_f32(bias + c + 8), a3 = vld1q_f32(bias + c + 12);
    }
    for (size_t t = 0; t < taps; ++t) {
      const float* restrict xp = x + xo[t] + c;
      const float* restrict wp = w + wo[t] + c;
      a0 = vfmaq_f32(a0, vld1q_f32(xp), vld1q_f32(wp));
      a1 = vfmaq_f32(a1, vld1q_f32(xp + 4), vld1q_f32(wp + 4));
      a2 = vfmaq_f32(a2, vld1q_f32(xp + 8), vld1q_f32(wp + 8));
      a3 = vfmaq_f32(a3, vld1q_f32(xp + 12), vld1q_f32(wp + 12));
    }
    if (rp) {
      a0 = vaddq_f32(a0, vld1q_f32(rp + c)), a1 = vaddq_f32(a1, vld1q_f32(rp + c + 4));
      a2 = vaddq_f32(a2, vld1q_f32(rp + c + 8)), a3 = vaddq_f32(a3, vld1q_f32(rp + c + 12));
    }
    vst1q_f32(out + c, vminq_f32(vmaxq_f32(a0, vlo), vhi));
    vst1q_f32(out + c + 4, vminq_f32(vmaxq_f32(a1, vlo), vhi));
    vst1q_f32(out + c + 8, vminq_f32(vmaxq_f32(a2, vlo), vhi));
    vst1q_f32(out + c + 12, vminq_f32(vmaxq_f32(a3, vlo), vhi));
  }
  for (; c + 4 <= channels; c += 4) {
    float32x4_t a0 = bias ? vld1q_f32(bias + c) : vdupq_n_f32(0.0f);
    for (size_t t = 0; t < taps; ++t) a0 = vfmaq_f32(a0, vld1q_f32(x + xo[t] + c), vld1q_f32(w + wo[t] + c));
    if (rp) a0 = vaddq_f32(a0, vld1q_f32(rp + c));
    vst1q_f32(out + c, vminq_f32(vmaxq_f32(a0, vlo), vhi));
  }
  for (; c < channels; ++c) {
    float a0 = bias ? bias[c] : 0.0f;
    for (size_t t = 0; t < taps; ++t) a0 += x[xo[t] + c] * w[wo[t] + c];
    if (rp) a0 += rp[c];
    out[c] = a0 < lo ? lo : (a0 > hi ? hi : a0);
  }
}
#define TSL_DW_NEON 1
#else
#define TSL_DW_NEON 0
#endif

void tsl_f32_dwconv_nhwc_minmax__autovec(const tsl_window* win, size_t channels, const float* restrict x,
                                         const float* restrict w, const float* restrict bias,
                                         const float* restrict r, size_t oy0, size_t oy1, float* restrict y,
                                         float lo, float hi) {
#if TSL_DW_NEON
  if (win->kh * win->kw <= kDwMaxTaps) {
    for (size_t oy = oy0; oy < oy1; ++oy) {
      for (size_t ox = 0; ox < win->ow; ++ox) {
        const size_t o = ((oy - oy0) * win->ow + ox) * channels;
        dw_pixel_neon(win, channels, x, w, bias, r ? r + o : 0, oy, ox, y + o, lo, hi);
      }
    }
    return;
  }
#endif
  for (size_t oy = oy0; oy < oy1; ++oy) {
    for (size_t ox = 0; ox < win->ow; ++ox) {
      float* restrict acc = y + ((oy - oy0) * win->ow + ox) * channels;
      if (bias) {
        memcpy(acc, bias, channels * sizeof(float));
      } else {
        memset(acc, 0, channels * sizeof(float));
      }
      for (size_t ky = 0; ky < win->kh; ++ky) {
        const long iy = tsl_tap(oy, ky, win->stride_h, win->dilation_h, win->pad_top, win->h);
        if (iy < 0) continue;
        for (size_t kx = 0; kx < win->kw; ++kx) {
          const long ix = tsl_tap(ox, kx, win->stride_w, win->dilation_w, win->pad_left, win->w);
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
