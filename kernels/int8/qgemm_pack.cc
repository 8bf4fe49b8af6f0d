// Weight packing for the u8 x s8 GEMM, and the CPU checks.
#include <algorithm>
#include <cstdlib>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/int8/qgemm.h"
#include "kernels/int8/requantize.h"

namespace tessel {

bool QGemmBytePairsFitInt16(const int8_t* w, int64_t n, int64_t k) {
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t kk = 0; kk < k; kk += 2) {
      const int pair = std::abs(int{w[j * k + kk]}) + (kk + 1 < k ? std::abs(int{w[j * k + kk + 1]}) : 0);
      if (pair > 128) return false;
    }
  }
  return true;
}

PackedQGemmWeights PackQGemmWeights(const int8_t* w, int64_t n, int64_t k, const int32_t* bias, int32_t x_zero_point,
                                    const std::vector<int64_t>& multiplier, const std::vector<int64_t>& shift,
                                    int64_t mmla_segment_len, bool wide) {
  PackedQGemmWeights p;
  p.n = n;
  p.k = k;
  p.kp = (k + 3) / 4 * 4;
  const int64_t blocks = (n + kQGemmNr - 1) / kQGemmNr;
  const int64_t padded = (n + kQGemmLanes - 1) / kQGemmLanes * kQGemmLanes;
  p.panels.assign(padded * p.kp, 0);
  p.bias.assign(blocks * kQGemmNr, 0);
  p.scale.assign(blocks * kQGemmNr, 0.0f);
  p.dot_bias.assign(blocks * kQGemmNr, 0);
  if (mmla_segment_len > 0) {
    p.mmla_segment_len = mmla_segment_len;
    p.seg8 = (mmla_segment_len + 7) / 8 * 8;
    p.kp8 = p.kp / mmla_segment_len * p.seg8;
    p.mmla_panels.assign(padded * p.kp8, 0);
  }
  p.byte_pairs_fit_int16 = QGemmBytePairsFitInt16(w, n, k);
  // The AVX2 kernel reads `panels` where the byte pairs fit (qgemm_avx2.cc): no widened copy then.
  wide = wide && !p.byte_pairs_fit_int16;
  if (wide) p.wide_panels.assign(padded * p.kp, 0);
  bool fits = true;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t block = j / kQGemmNr, lane = j % kQGemmNr;
    const int64_t nb = std::min<int64_t>(kQGemmNr, padded - block * kQGemmNr);
    int8_t* dst = p.panels.data() + block * kQGemmNr * p.kp;
    int32_t sum = 0;
    int64_t abs_sum = 0;
    for (int64_t kk = 0; kk < k; ++kk) {
      const int8_t v = w[j * k + kk];
      sum += v;
      abs_sum += std::abs(int{v});
      dst[((kk / 4) * nb + lane) * 4 + kk % 4] = v;
    }
    if (wide) {
      int16_t* wdst = p.wide_panels.data() + block * kQGemmNr * p.kp;
      for (int64_t kk = 0; kk < k; ++kk) {
        const int64_t e = kk % 4;
        wdst[(kk / 4) * nb * 4 + (lane / 8) * 32 + (e % 2) * 16 + (lane % 8) * 2 + e / 2] = w[j * k + kk];
      }
    }
    if (mmla_segment_len > 0) {
      int8_t* mdst = p.mmla_panels.data() + block * kQGemmNr * p.kp8;
      for (int64_t kk = 0; kk < k; ++kk) {
        const int64_t q = kk / mmla_segment_len * p.seg8 + kk % mmla_segment_len;  // K position in the layout
        mdst[((q / 8) * (nb / 2) + lane / 2) * 16 + (lane % 2) * 8 + q % 8] = w[j * k + kk];
      }
    }
    p.bias[j] = (bias != nullptr ? bias[j] : 0) - x_zero_point * sum;
    // Modulo 2^32 like the kernels' accumulation, so exact whenever the u8 sum is.
    p.dot_bias[j] = static_cast<int32_t>(static_cast<uint32_t>(p.bias[j]) + 128u * static_cast<uint32_t>(sum));
    const size_t i = multiplier.size() == 1 ? 0 : static_cast<size_t>(j);
    p.scale[j] = RequantizeScale(static_cast<int32_t>(multiplier[i]), static_cast<int32_t>(shift[i]));
    fits = fits && ScaledAccumulatorsFitInt32(bias != nullptr ? bias[j] : 0, x_zero_point, sum, abs_sum, p.scale[j]);
  }
  p.scaled_fits_int32 = fits;
  return p;
}

bool HasQGemmVnni() {
#if defined(__x86_64__)
  const CpuFeatures& f = GetCpuFeatures();
  return f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq && f.avx512vnni;
#else
  return false;
#endif
}

bool HasQGemmAvx2() {
#if defined(__x86_64__)
  return GetCpuFeatures().avx2;
#else
  return false;
#endif
}

bool HasQGemmAvxVnni() {
#if defined(__x86_64__)
  const CpuFeatures& f = GetCpuFeatures();
  return f.avx2 && f.avx_vnni;
#else
  return false;
#endif
}

bool HasQGemmNeonDot() {
#if defined(__aarch64__)
  const CpuFeatures& f = GetCpuFeatures();
  return f.neon && f.dotprod;
#else
  return false;
#endif
}

bool HasQGemmNeonI8mm() {
#if defined(__aarch64__)
  const CpuFeatures& f = GetCpuFeatures();
  return f.neon && f.i8mm;
#else
  return false;
#endif
}

bool HasQGemmSve() {
#if defined(__aarch64__)
  return GetCpuFeatures().sve;
#else
  return false;
#endif
}

bool HasQGemmSveI8mm() {
#if defined(__aarch64__)
  const CpuFeatures& f = GetCpuFeatures();
  return f.sve && f.sve_i8mm;
#else
  return false;
#endif
}

}  // namespace tessel
