// The group-wise INT4 / INT3, Q4_1, Q5_0, Q5_1, k-quant (Q2_K ... Q6_K) and IQ4_XS Panel16 kernels
// (gemv.h, dtype "group_panel16xq8") for AVX2 CPUs without VNNI (Zen 2/3, Intel before Ice Lake): vpmaddubsw +
// vpmaddwd on each ymm half of the 64-byte vectors, decode on two lockstep streams, prefill on panels
// unpacked once per call. The kernels themselves are in internal/panel16_avx2_*.inc, shared with
// gemv_gemm_avxvnni.cc.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <type_traits>

#include "kernels/cpu/cpu_features.h"
#include "kernels/gemv/internal/decode_streams.h"
#include "kernels/gemv/internal/gemv_kernels.h"

#define TESSEL_P16_VNNI 0

namespace tessel {
namespace {

#include "kernels/gemv/internal/panel16_avx2_common.inc"
#include "kernels/gemv/internal/panel16_avx2_group.inc"
#include "kernels/gemv/internal/panel16_avx2_kquant.inc"

}  // namespace

void tessel_group_panel16_q8_gemm__avx2(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  if (a.kquant != 0) return RunKQuantLayout(a, row_begin, row_end);
  RunGroupLayout(a, row_begin, row_end);
}

}  // namespace tessel
