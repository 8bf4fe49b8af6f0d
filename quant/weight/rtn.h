// Round-to-nearest (RTN) weight quantization: each group's parameters from its min/max, every weight
// to its nearest code. The baseline GPTQ and AWQ are measured against.
#ifndef TESSEL_QUANT_WEIGHT_RTN_H_
#define TESSEL_QUANT_WEIGHT_RTN_H_

#include <cstdint>

#include "quant/weight/scheme.h"

namespace tessel::quant {

// w is [rows, cols] row-major; cols must be a multiple of the group (ValidateScheme). `clip`, when
// given, holds one range fraction (<= 1) per (row, group), as AWQ's clipping search picks; else
// `search`, when given, picks each group's range with SearchGroupParams (unweighted).
QuantizedMatrix RtnQuantize(const float* w, int64_t rows, int64_t cols, const QuantScheme& scheme,
                            const float* clip = nullptr, const ClipSearch* search = nullptr);

}  // namespace tessel::quant

#endif  // TESSEL_QUANT_WEIGHT_RTN_H_
