// Builds GGUF v3 files in memory: metadata (scalars, strings, arrays, or raw values copied from
// another file) and tensors, laid out in order at the file's alignment as llama.cpp expects.
#ifndef TESSEL_LLM_GGUF_GGUF_WRITER_H_
#define TESSEL_LLM_GGUF_GGUF_WRITER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "llm/gguf/ggml_types.h"
#include "llm/gguf/gguf.h"

namespace tessel::llm {

class GgufWriter {
 public:
  // Setting a key that exists replaces its value in place.
  void SetString(absl::string_view key, absl::string_view value);
  void SetUint32(absl::string_view key, uint32_t value);
  void SetInt32(absl::string_view key, int32_t value);
  void SetUint64(absl::string_view key, uint64_t value);
  void SetFloat32(absl::string_view key, float value);
  void SetBool(absl::string_view key, bool value);
  void SetStringArray(absl::string_view key, absl::Span<const std::string> values);
  void SetFloat32Array(absl::string_view key, absl::Span<const float> values);
  void SetInt32Array(absl::string_view key, absl::Span<const int32_t> values);
  // `encoded` is the value as stored after its type tag (GgufValue::encoded).
  void SetRaw(absl::string_view key, GgufType type, absl::string_view encoded);
  void Remove(absl::string_view key);
  // Every key of `file`, in order (general.alignment included).
  void CopyMetadata(const GgufFile& file);

  // dims in ggml order (dims[0] contiguous); `data` must hold exactly the bytes the type and shape
  // need. The bytes are copied.
  absl::Status AddTensor(absl::string_view name, GgmlType type, std::vector<int64_t> dims, absl::string_view data);

  void RemoveTensor(absl::string_view name);

  std::string Serialize() const;
  absl::Status WriteFile(const std::string& path) const;

 private:
  struct Entry {
    std::string key;
    GgufType type;
    std::string encoded;
  };
  struct Tensor {
    std::string name;
    GgmlType type;
    std::vector<int64_t> dims;
    std::string data;
  };
  uint64_t Alignment() const;

  std::vector<Entry> metadata_;
  std::vector<Tensor> tensors_;
};

}  // namespace tessel::llm

#endif  // TESSEL_LLM_GGUF_GGUF_WRITER_H_
