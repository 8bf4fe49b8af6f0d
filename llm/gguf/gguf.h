// GGUF (v2/v3) reader: metadata key-values of every type including arrays, tensor infos, alignment,
// and zero-copy tensor data views into a memory-mapped file. Everything is validated at open, so a
// file that opens has every tensor inside the data section and every value readable.
#ifndef TESSEL_LLM_GGUF_GGUF_H_
#define TESSEL_LLM_GGUF_GGUF_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "support/mapped_file.h"
#include "llm/gguf/ggml_types.h"

namespace tessel::llm {

inline constexpr uint32_t kGgufMagic = 0x46554747;  // "GGUF" read as little-endian uint32
inline constexpr uint64_t kGgufDefaultAlignment = 32;
inline constexpr int kGgufMaxDims = 4;

enum class GgufType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};
absl::string_view GgufTypeName(GgufType t);

// One metadata value. Views point into the file's bytes, which the GgufFile keeps alive.
struct GgufValue {
  GgufType type = GgufType::kUint8;
  GgufType elem_type = GgufType::kUint8;  // arrays only
  uint64_t count = 1;                     // arrays: number of elements
  const uint8_t* payload = nullptr;       // numeric scalar or numeric array elements (little-endian)
  std::vector<absl::string_view> strings;  // a string value, or the elements of a string array
  absl::string_view encoded;              // the value exactly as stored after its type tag

  bool is_array() const { return type == GgufType::kArray; }
};

struct GgufTensorInfo {
  std::string name;
  GgmlType type = GgmlType::kF32;
  std::vector<int64_t> dims;  // ggml order: dims[0] is contiguous (the row length)
  uint64_t offset = 0;        // from the start of the data section
  uint64_t size_bytes = 0;
  const uint8_t* data = nullptr;

  int64_t num_elements() const;
  int64_t row_length() const { return dims.empty() ? 1 : dims[0]; }
  int64_t num_rows() const { return row_length() == 0 ? 0 : num_elements() / row_length(); }
  // "[128, 512]" in ggml order.
  std::string ShapeString() const;
};

class GgufFile {
 public:
  static absl::StatusOr<std::unique_ptr<GgufFile>> Open(const std::string& path, FileLoad load = FileLoad::kMap);
  static absl::StatusOr<std::unique_ptr<GgufFile>> Parse(std::shared_ptr<const MappedFile> bytes);

  const std::string& path() const { return file_->path(); }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  const std::shared_ptr<const MappedFile>& file() const { return file_; }

  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return metadata_; }
  const GgufValue* Find(absl::string_view key) const;
  bool Has(absl::string_view key) const { return Find(key) != nullptr; }

  // Typed access. NotFound when the key is absent; InvalidArgument naming the key and the stored
  // type when it does not convert (integers must fit, floats accept integers).
  absl::StatusOr<std::string> GetString(absl::string_view key) const;
  absl::StatusOr<int64_t> GetInt(absl::string_view key) const;
  absl::StatusOr<double> GetFloat(absl::string_view key) const;
  absl::StatusOr<bool> GetBool(absl::string_view key) const;
  absl::StatusOr<absl::Span<const absl::string_view>> GetStringArray(absl::string_view key) const;
  absl::StatusOr<std::vector<double>> GetFloatArray(absl::string_view key) const;
  absl::StatusOr<std::vector<int64_t>> GetIntArray(absl::string_view key) const;
  // The same, with a default for an absent key (a present key of the wrong type is still an error).
  absl::StatusOr<int64_t> GetIntOr(absl::string_view key, int64_t fallback) const;
  absl::StatusOr<double> GetFloatOr(absl::string_view key, double fallback) const;
  absl::StatusOr<bool> GetBoolOr(absl::string_view key, bool fallback) const;
  absl::StatusOr<std::string> GetStringOr(absl::string_view key, absl::string_view fallback) const;

  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* FindTensor(absl::string_view name) const;
  // NotFound naming the tensor and the file.
  absl::StatusOr<const GgufTensorInfo*> GetTensor(absl::string_view name) const;

 private:
  GgufFile() = default;
  absl::Status TypeError(absl::string_view key, const GgufValue& v, absl::string_view expected) const;

  std::shared_ptr<const MappedFile> file_;
  uint32_t version_ = 0;
  uint64_t alignment_ = kGgufDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  absl::flat_hash_map<std::string, size_t> metadata_index_;
  std::vector<GgufTensorInfo> tensors_;
  absl::flat_hash_map<std::string, size_t> tensor_index_;
};

}  // namespace tessel::llm

#endif  // TESSEL_LLM_GGUF_GGUF_H_
