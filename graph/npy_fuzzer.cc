// Fuzz target for the .npy reader: any byte string parses to a tensor whose every byte is readable, or
// is refused with a status.
#include <cstddef>
#include <cstdint>

#include "graph/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto t = tessel::ParseNpy(absl::string_view(reinterpret_cast<const char*>(data), size), "fuzz.npy");
  if (!t.ok()) return 0;
  volatile uint8_t sink = 0;
  const uint8_t* p = static_cast<const uint8_t*>(t->raw_data());
  for (size_t i = 0; i < t->byte_size(); ++i) sink = sink ^ p[i];
  (void)sink;
  return 0;
}
