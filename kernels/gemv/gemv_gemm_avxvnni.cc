// The gemv_gemm_avx2_panel16.cc kernels (group types, k-quants, IQ4_XS on Panel16, dtype "group_panel16xq8")
// with AVX-VNNI (Alder Lake, Sapphire Rapids): vpdpbusd on ymm in place of vpmaddubsw + vpmaddwd, which
// also lifts the int16 limits on how many products add up before widening.
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

#define TESSEL_P16_VNNI 1

namespace tessel {
namespace {

#include "kernels/gemv/internal/panel16_avx2_common.inc"
#include "kernels/gemv/internal/panel16_avx2_group.inc"
#include "kernels/gemv/internal/panel16_avx2_kquant.inc"

}  // namespace

void tessel_group_panel16_q8_gemm__avxvnni(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  if (a.kquant != 0) return RunKQuantLayout(a, row_begin, row_end);
  RunGroupLayout(a, row_begin, row_end);
}

}  // namespace tessel
