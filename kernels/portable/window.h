/* The window walk of the direct kernels over images (im2col, depthwise convolution, pooling), internal to
 * kernels/portable. */
#ifndef TESSEL_KERNELS_PORTABLE_WINDOW_H_
#define TESSEL_KERNELS_PORTABLE_WINDOW_H_

#include <stddef.h>

/* The input coordinate of window tap `t` at output position `o`, or -1 in the padding. */
static inline long tsl_tap(size_t o, size_t t, size_t stride, size_t dilation, size_t pad, size_t extent) {
  const long i = (long)(o * stride + t * dilation) - (long)pad;
  return i >= 0 && i < (long)extent ? i : -1;
}

#endif  /* TESSEL_KERNELS_PORTABLE_WINDOW_H_ */
