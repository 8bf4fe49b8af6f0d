// Round-to-nearest quantization, group by group.
#include "quant/weight/rtn.h"

#include <algorithm>

namespace tessel::quant {

QuantizedMatrix RtnQuantize(const float* w, int64_t rows, int64_t cols, const QuantScheme& scheme,
                            const float* clip, const ClipSearch* search) {
  QuantizedMatrix q;
  q.Resize(scheme, rows, cols);
  const int64_t ng = cols / scheme.group;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t g = 0; g < ng; ++g) {
      const float* x = w + r * cols + g * scheme.group;
      const auto [lo, hi] = std::minmax_element(x, x + scheme.group);
      const GroupParams p = clip == nullptr && search != nullptr
                                ? SearchGroupParams(scheme, x, nullptr, scheme.group, *search)
                                : ComputeGroupParams(scheme, *lo, *hi, clip != nullptr ? clip[r * ng + g] : 1.0f);
      q.params[r * ng + g] = p;
      for (int j = 0; j < scheme.group; ++j) {
        q.codes[r * cols + g * scheme.group + j] = static_cast<uint8_t>(QuantizeValue(x[j], p, scheme.max_code()));
      }
    }
  }
  return q;
}

}  // namespace tessel::quant
