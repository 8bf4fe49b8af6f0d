// Einsum equations ("bij,bjk->bik", "...ii->...i", implicit "ij,jk") parsed against the input ranks into
// one label per dimension; shared by Einsum's type inference and its reference kernel.
#ifndef TESSEL_GRAPH_OPS_EINSUM_SPEC_H_
#define TESSEL_GRAPH_OPS_EINSUM_SPEC_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tessel {

// Labels 0..51 are the letters a-z, A-Z; the dimensions an ellipsis stands for get labels from
// kEinsumEllipsisLabel on, right-aligned across the inputs (numpy broadcasting), so that the last
// ellipsis dimension of every input has the same label.
inline constexpr int kEinsumEllipsisLabel = 52;

struct EinsumSpec {
  std::vector<std::vector<int>> inputs;  // one label per dimension of each input
  std::vector<int> output;               // one label per output dimension
  std::vector<int> summed;               // labels in some input but not in the output, ascending
};

// Parses `equation` (spaces ignored) for inputs of the given ranks. Without "->" the output is the
// ellipsis dimensions followed by the letters that occur once, in ASCII order (numpy's implicit mode).
// Errors quote the equation and say what is wrong.
absl::StatusOr<EinsumSpec> ParseEinsum(absl::string_view equation, const std::vector<int>& ranks);

}  // namespace tessel

#endif  // TESSEL_GRAPH_OPS_EINSUM_SPEC_H_
