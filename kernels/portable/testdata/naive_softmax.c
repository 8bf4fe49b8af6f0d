/* Counter-example for kernels/VECTORIZATION.md and check_vectorized_test: softmax's exp-and-sum step
 * calling libm's expf and summing in order. */
#include <math.h>

float naive_exp_sum(int n, const float* x, float max, float* y) {
  float sum = 0.0f;
  // tessel:hot
  for (int i = 0; i < n; ++i) {
    y[i] = expf(x[i] - max);
    sum += y[i];
  }
  return sum;
}
