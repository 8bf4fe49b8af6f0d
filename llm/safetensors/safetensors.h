// Hugging Face safetensors: an 8-byte header length, a JSON header naming each tensor's dtype, shape
// and byte range, then the raw little-endian data, memory-mapped here without copies. A model
// directory holds one file (model.safetensors) or shards listed in model.safetensors.index.json.
#ifndef TESSEL_LLM_SAFETENSORS_SAFETENSORS_H_
#define TESSEL_LLM_SAFETENSORS_SAFETENSORS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "support/mapped_file.h"

namespace tessel::llm {

struct SafetensorsTensor {
  std::string name;
  std::string dtype;           // as written: "F32", "BF16", ...
  int element_bytes = 0;
  std::vector<int64_t> shape;  // row-major (PyTorch order)
  const uint8_t* data = nullptr;
  uint64_t size_bytes = 0;
  int64_t num_elements() const;
};

class SafetensorsFile {
 public:
  static absl::StatusOr<std::unique_ptr<SafetensorsFile>> Open(const std::string& path,
                                                             FileLoad load = FileLoad::kMap);
  static absl::StatusOr<std::unique_ptr<SafetensorsFile>> Parse(std::shared_ptr<const MappedFile> bytes);

  const std::string& path() const { return file_->path(); }
  const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }
  const SafetensorsTensor* Find(absl::string_view name) const;
  const MappedFile& file() const { return *file_; }

 private:
  SafetensorsFile() = default;
  std::shared_ptr<const MappedFile> file_;
  std::vector<SafetensorsTensor> tensors_;
  absl::flat_hash_map<std::string, size_t> index_;
};

// All tensors of a model directory, across shards.
class SafetensorsDir {
 public:
  static absl::StatusOr<std::unique_ptr<SafetensorsDir>> Open(const std::string& dir,
                                                            FileLoad load = FileLoad::kMap);

  const std::string& dir() const { return dir_; }
  const SafetensorsTensor* Find(absl::string_view name) const;
  // MappedFile::Prefault / ReleasePages on every shard.
  void Prefault() const;
  void ReleasePages() const;
  // NotFound naming the tensor and the directory.
  absl::StatusOr<const SafetensorsTensor*> Get(absl::string_view name) const;
  size_t num_tensors() const { return by_name_.size(); }

 private:
  SafetensorsDir() = default;
  std::string dir_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  absl::flat_hash_map<std::string, const SafetensorsTensor*> by_name_;
};

}  // namespace tessel::llm

#endif  // TESSEL_LLM_SAFETENSORS_SAFETENSORS_H_
