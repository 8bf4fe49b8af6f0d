// GGUF serialization (little-endian, version 3).
#include "llm/gguf/gguf_writer.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "support/atomic_file.h"

namespace tessel::llm {
namespace {

template <typename T>
void Append(std::string* out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out->append(b, sizeof(T));
}

void AppendString(std::string* out, absl::string_view s) {
  Append<uint64_t>(out, s.size());
  out->append(s.data(), s.size());
}

template <typename T>
std::string EncodeArray(GgufType elem, absl::Span<const T> values) {
  std::string out;
  Append<uint32_t>(&out, static_cast<uint32_t>(elem));
  Append<uint64_t>(&out, values.size());
  for (const T& v : values) Append<T>(&out, v);
  return out;
}

}  // namespace

void GgufWriter::SetRaw(absl::string_view key, GgufType type, absl::string_view encoded) {
  for (Entry& e : metadata_) {
    if (e.key == key) {
      e.type = type;
      e.encoded = std::string(encoded);
      return;
    }
  }
  metadata_.push_back({std::string(key), type, std::string(encoded)});
}

void GgufWriter::Remove(absl::string_view key) {
  for (auto it = metadata_.begin(); it != metadata_.end(); ++it) {
    if (it->key == key) {
      metadata_.erase(it);
      return;
    }
  }
}

void GgufWriter::SetString(absl::string_view key, absl::string_view value) {
  std::string enc;
  AppendString(&enc, value);
  SetRaw(key, GgufType::kString, enc);
}

void GgufWriter::SetUint32(absl::string_view key, uint32_t value) {
  std::string enc;
  Append(&enc, value);
  SetRaw(key, GgufType::kUint32, enc);
}

void GgufWriter::SetInt32(absl::string_view key, int32_t value) {
  std::string enc;
  Append(&enc, value);
  SetRaw(key, GgufType::kInt32, enc);
}

void GgufWriter::SetUint64(absl::string_view key, uint64_t value) {
  std::string enc;
  Append(&enc, value);
  SetRaw(key, GgufType::kUint64, enc);
}

void GgufWriter::SetFloat32(absl::string_view key, float value) {
  std::string enc;
  Append(&enc, value);
  SetRaw(key, GgufType::kFloat32, enc);
}

void GgufWriter::SetBool(absl::string_view key, bool value) {
  SetRaw(key, GgufType::kBool, std::string(1, value ? '\1' : '\0'));
}

void GgufWriter::SetStringArray(absl::string_view key, absl::Span<const std::string> values) {
  std::string enc;
  Append<uint32_t>(&enc, static_cast<uint32_t>(GgufType::kString));
  Append<uint64_t>(&enc, values.size());
  for (const std::string& v : values) AppendString(&enc, v);
  SetRaw(key, GgufType::kArray, enc);
}

void GgufWriter::SetFloat32Array(absl::string_view key, absl::Span<const float> values) {
  SetRaw(key, GgufType::kArray, EncodeArray(GgufType::kFloat32, values));
}

void GgufWriter::SetInt32Array(absl::string_view key, absl::Span<const int32_t> values) {
  SetRaw(key, GgufType::kArray, EncodeArray(GgufType::kInt32, values));
}

void GgufWriter::CopyMetadata(const GgufFile& file) {
  for (const auto& [key, value] : file.metadata()) SetRaw(key, value.type, value.encoded);
}

absl::Status GgufWriter::AddTensor(absl::string_view name, GgmlType type, std::vector<int64_t> dims,
                                   absl::string_view data) {
  const GgmlTypeInfo* info = FindGgmlType(static_cast<uint32_t>(type));
  if (info == nullptr) return absl::InvalidArgumentError(absl::StrCat("tensor '", name, "': unknown ggml type"));
  if (dims.empty() || dims.size() > kGgufMaxDims) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", name, "': GGUF tensors have 1 to 4 dimensions"));
  }
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("tensor '", name, "': negative dimension"));
    n *= d;
  }
  if (dims[0] % info->block_size != 0) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", name, "': rows of ", dims[0],
                                                   " elements are not a multiple of the ", info->name,
                                                   " block size ", info->block_size));
  }
  const size_t expected = static_cast<size_t>(n / info->block_size * info->block_bytes);
  if (data.size() != expected) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", name, "': ", data.size(), " bytes given, ", info->name,
                                                   " with ", n, " elements needs ", expected));
  }
  for (const Tensor& t : tensors_) {
    if (t.name == name) return absl::AlreadyExistsError(absl::StrCat("tensor '", name, "' added twice"));
  }
  tensors_.push_back({std::string(name), type, std::move(dims), std::string(data)});
  return absl::OkStatus();
}

void GgufWriter::RemoveTensor(absl::string_view name) {
  for (auto it = tensors_.begin(); it != tensors_.end(); ++it) {
    if (it->name == name) {
      tensors_.erase(it);
      return;
    }
  }
}

uint64_t GgufWriter::Alignment() const {
  for (const Entry& e : metadata_) {
    if (e.key == "general.alignment" && e.type == GgufType::kUint32 && e.encoded.size() == 4) {
      uint32_t a;
      std::memcpy(&a, e.encoded.data(), 4);
      if (a != 0 && (a & (a - 1)) == 0) return a;
    }
  }
  return kGgufDefaultAlignment;
}

std::string GgufWriter::Serialize() const {
  const uint64_t align = Alignment();
  auto pad = [align](uint64_t n) { return (n + align - 1) / align * align; };
  std::string out;
  Append<uint32_t>(&out, kGgufMagic);
  Append<uint32_t>(&out, 3);
  Append<uint64_t>(&out, tensors_.size());
  Append<uint64_t>(&out, metadata_.size());
  for (const Entry& e : metadata_) {
    AppendString(&out, e.key);
    Append<uint32_t>(&out, static_cast<uint32_t>(e.type));
    out += e.encoded;
  }
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    AppendString(&out, t.name);
    Append<uint32_t>(&out, static_cast<uint32_t>(t.dims.size()));
    for (int64_t d : t.dims) Append<uint64_t>(&out, static_cast<uint64_t>(d));
    Append<uint32_t>(&out, static_cast<uint32_t>(t.type));
    Append<uint64_t>(&out, offset);
    offset += pad(t.data.size());
  }
  out.resize(pad(out.size()), '\0');
  for (const Tensor& t : tensors_) {
    out += t.data;
    out.resize(pad(out.size()), '\0');
  }
  return out;
}

absl::Status GgufWriter::WriteFile(const std::string& path) const {
  return WriteFileAtomically(path, Serialize());
}

}  // namespace tessel::llm
