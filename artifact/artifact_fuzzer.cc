// Fuzz target: any byte string given to the artifact loader is rejected cleanly or loads a plan whose
// every index and range was validated.
#include <cstddef>
#include <cstdint>

#include "artifact/artifact.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tessel::ArtifactLoadOptions options;
  options.check_target = false;
  auto a = tessel::Artifact::FromBytes(absl::string_view(reinterpret_cast<const char*>(data), size), options, "fuzz");
  if (a.ok()) {
    // Touch what a runtime would: every tensor's bytes in the weights section.
    volatile uint8_t sink = 0;
    for (const auto& t : (*a)->plan().tensors()) {
      if (t.storage() == tessel::artifact::Tensor::WEIGHTS && t.bytes() > 0) {
        sink ^= (*a)->weights()[t.offset()] ^ (*a)->weights()[t.offset() + t.bytes() - 1];
      }
    }
    (void)sink;
  }
  return 0;
}
