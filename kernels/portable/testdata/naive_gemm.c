/* Counter-example for kernels/VECTORIZATION.md and check_vectorized_test: the textbook i-j-p GEMM.
 * Its inner loop is a strided float reduction, which GCC will not reorder without -ffast-math. */
void naive_gemm(int m, int n, int k, const float* a, const float* b, float* c) {
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      float sum = 0.0f;
      // tessel:hot
      for (int p = 0; p < k; ++p) sum += a[i * k + p] * b[p * n + j];
      c[i * n + j] = sum;
    }
  }
}
