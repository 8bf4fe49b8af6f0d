// libFuzzer target for the GGUF reader: any byte string must parse or fail with a status, and
// whatever parses must be fully readable (metadata through every getter, every tensor byte, the
// tokenizer built from it). Build with -fsanitize=fuzzer (tag "fuzz"); with
// TESSEL_FUZZ_REPLAY_MAIN defined it is a plain binary that replays the files named on its command
// line.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "llm/gguf/gguf.h"
#include "llm/tokenizer/tokenizer.h"
#include "support/mapped_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel::llm;  // NOLINT: a fuzzer entry point outside any namespace
  auto file = GgufFile::Parse(
      tessel::MappedFile::FromBytes(absl::string_view(reinterpret_cast<const char*>(data), size), "fuzz.gguf"));
  if (!file.ok()) return 0;
  volatile uint64_t sink = 0;
  for (const GgufTensorInfo& t : (*file)->tensors()) {
    for (uint64_t i = 0; i < t.size_bytes; ++i) sink = sink + t.data[i];
  }
  for (const auto& [key, value] : (*file)->metadata()) {
    (void)(*file)->GetInt(key);
    (void)(*file)->GetFloat(key);
    (void)(*file)->GetBool(key);
    (void)(*file)->GetString(key);
    (void)(*file)->GetIntArray(key);
    (void)(*file)->GetFloatArray(key);
    (void)(*file)->GetStringArray(key);
  }
  auto tokenizer = Tokenizer::FromGguf(**file);
  if (tokenizer.ok()) {
    const std::vector<int32_t> ids = (*tokenizer)->Encode("Hello, world! \xc3\xa9 123");
    (void)(*tokenizer)->Decode(ids);
  }
  return 0;
}

#ifdef TESSEL_FUZZ_REPLAY_MAIN
int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    auto bytes = tessel::ReadFileToString(argv[i]);
    if (!bytes.ok()) {
      std::fprintf(stderr, "%s\n", std::string(bytes.status().message()).c_str());
      return 1;
    }
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size());
    std::printf("%s: ok\n", argv[i]);
  }
  return 0;
}
#endif
