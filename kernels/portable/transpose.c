/* Axis permutation (layout changes at the model's edges). Scalar: the strided side defeats the
 * vectorizer, and these run once per image, outside the hot path. */
#include "tessel_portable.h"

void tsl_f32_transpose__scalar(size_t rank, const size_t* restrict shape, const size_t* restrict perm,
                               const float* restrict x, float* restrict y) {
  size_t in_stride[6], out_shape[6], stride[6], index[6] = {0, 0, 0, 0, 0, 0};
  size_t total = 1;
  for (size_t d = rank; d-- > 0;) {
    in_stride[d] = total;
    total *= shape[d];
  }
  for (size_t d = 0; d < rank; ++d) {
    out_shape[d] = shape[perm[d]];
    stride[d] = in_stride[perm[d]];
  }
  for (size_t i = 0; i < total; ++i) {
    size_t offset = 0;
    for (size_t d = 0; d < rank; ++d) offset += index[d] * stride[d];
    y[i] = x[offset];
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < out_shape[d]) break;
      index[d] = 0;
    }
  }
}
