// NumPy .npy files (format versions 1-3, little-endian, C order): how users hand tensors to Tessel and
// get results back. numpy has no bfloat16: bf16 tensors are written, and uint16 arrays read, as bfloat16
// bit patterns.
#ifndef TESSEL_GRAPH_NPY_H_
#define TESSEL_GRAPH_NPY_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/tensor.h"

namespace tessel {

absl::StatusOr<Tensor> ParseNpy(absl::string_view bytes, absl::string_view what = "npy data");
absl::StatusOr<Tensor> ReadNpy(const std::string& path);
std::string SerializeNpy(const Tensor& t);
absl::Status WriteNpy(const std::string& path, const Tensor& t);

}  // namespace tessel

#endif  // TESSEL_GRAPH_NPY_H_
