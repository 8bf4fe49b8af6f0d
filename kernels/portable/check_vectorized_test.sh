#!/bin/bash
# Every hot loop of the portable kernels vectorizes on x86-64 (AVX2, AVX-512), NEON and SVE, and the
# checker reports the naive counter-examples as missed (so it can fail).
set -euo pipefail
dir=kernels/portable
check="/usr/bin/python3 $dir/check_vectorized.py"
$check --target x86 --target avx512 --target neon --target sve "$dir"/*.c
# Softmax's exp-and-sum with an expf call misses everywhere; the i-j-p GEMM's in-order reduction
# misses on NEON (x86 and SVE vectorize it as a fold-left reduction, see VECTORIZATION.md).
$check --expect-missed --target x86 --target neon --target sve "$dir/testdata/naive_softmax.c"
$check --expect-missed --target neon "$dir/testdata/naive_gemm.c"
echo PASS
