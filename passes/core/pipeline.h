// Pass pipelines as text: "fold-constants,dce,fuse-conv-activation{activations=relu,relu6}".
// Parsing and printing round-trip. Named pipelines (O0..O3, cnn, llm) may appear as items.
#ifndef TESSEL_PASSES_CORE_PIPELINE_H_
#define TESSEL_PASSES_CORE_PIPELINE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "passes/core/pass.h"

namespace tessel {

struct PassSpec {
  std::string name;
  PassOptions options;
  bool operator==(const PassSpec& o) const { return name == o.name && options == o.options; }
};

// Syntax only: item names are not looked up. Errors give the character offset.
absl::StatusOr<std::vector<PassSpec>> ParsePipeline(absl::string_view text);
std::string PrintPipeline(const std::vector<PassSpec>& specs);

// The named pipelines and their text.
const std::vector<std::pair<std::string, std::string>>& NamedPipelines();

// Replaces named-pipeline items with their passes (recursively) and checks every name is a
// registered pass; unknown names get a suggestion list.
absl::StatusOr<std::vector<PassSpec>> ExpandPipeline(const std::vector<PassSpec>& specs);

}  // namespace tessel

#endif  // TESSEL_PASSES_CORE_PIPELINE_H_
