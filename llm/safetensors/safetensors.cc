// safetensors parsing with every offset checked against the file, and shard discovery.
#include "llm/safetensors/safetensors.h"

#include <cstring>
#include <limits>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "support/json.h"

namespace tessel::llm {
namespace {

// Element sizes of the dtypes the format defines.
int DtypeBytes(absl::string_view dtype) {
  static constexpr struct {
    const char* name;
    int bytes;
  } kDtypes[] = {{"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2},
                 {"U16", 2},  {"F16", 2}, {"BF16", 2}, {"I32", 4},     {"U32", 4},     {"F32", 4},
                 {"F64", 8},  {"I64", 8}, {"U64", 8}};
  for (const auto& d : kDtypes) {
    if (dtype == d.name) return d.bytes;
  }
  return 0;
}

constexpr uint64_t kMaxHeaderBytes = 100 << 20;  // the format's own limit

}  // namespace

int64_t SafetensorsTensor::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

absl::StatusOr<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(const std::string& path, FileLoad load) {
  absl::StatusOr<std::shared_ptr<const MappedFile>> file = MappedFile::Open(path, load);
  if (!file.ok()) return file.status();
  return Parse(*std::move(file));
}

absl::StatusOr<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Parse(std::shared_ptr<const MappedFile> bytes) {
  std::unique_ptr<SafetensorsFile> f(new SafetensorsFile());
  f->file_ = std::move(bytes);
  const std::string prefix = absl::StrCat("safetensors '", f->file_->path(), "': ");
  const uint64_t size = f->file_->size();
  if (size < 8) return absl::DataLossError(absl::StrCat(prefix, "file is truncated (", size, " bytes)"));
  uint64_t header_len;
  std::memcpy(&header_len, f->file_->data(), 8);
  if (header_len > kMaxHeaderBytes || header_len > size - 8) {
    return absl::DataLossError(absl::StrCat(prefix, "header length ", header_len, " does not fit the ", size,
                                            "-byte file (truncated, or not a safetensors file)"));
  }
  const absl::string_view header(reinterpret_cast<const char*>(f->file_->data()) + 8, header_len);
  absl::StatusOr<json::Value> root = json::Parse(header, absl::StrCat(prefix, "header"));
  if (!root.ok()) return root.status();
  if (!root->is_object()) return absl::InvalidArgumentError(absl::StrCat(prefix, "header is not a JSON object"));
  const uint64_t data_start = 8 + header_len;
  const uint64_t data_size = size - data_start;
  for (const auto& [name, info] : root->members()) {
    if (name == "__metadata__") continue;
    const std::string where = absl::StrCat(prefix, "tensor '", name, "'");
    const json::Value* dtype = info.Find("dtype");
    const json::Value* shape = info.Find("shape");
    const json::Value* offsets = info.Find("data_offsets");
    if (dtype == nullptr || !dtype->is_string() || shape == nullptr || !shape->is_array() || offsets == nullptr ||
        !offsets->is_array() || offsets->items().size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " needs \"dtype\" (string), \"shape\" (array) and \"data_offsets\" ([begin, end])"));
    }
    SafetensorsTensor t;
    t.name = name;
    t.dtype = dtype->str();
    t.element_bytes = DtypeBytes(t.dtype);
    if (t.element_bytes == 0) return absl::InvalidArgumentError(absl::StrCat(where, " has unknown dtype '", t.dtype, "'"));
    int64_t n = 1;
    for (const json::Value& d : shape->items()) {
      if (!d.is_integer() || d.integer() < 0 ||
          (d.integer() != 0 && n > std::numeric_limits<int64_t>::max() / 8 / d.integer())) {
        return absl::InvalidArgumentError(absl::StrCat(where, " has an invalid shape"));
      }
      t.shape.push_back(d.integer());
      n *= d.integer();
    }
    const json::Value& b = offsets->items()[0];
    const json::Value& e = offsets->items()[1];
    if (!b.is_integer() || !e.is_integer() || b.integer() < 0 || e.integer() < b.integer()) {
      return absl::InvalidArgumentError(absl::StrCat(where, " has invalid data_offsets"));
    }
    t.size_bytes = static_cast<uint64_t>(e.integer() - b.integer());
    if (t.size_bytes != static_cast<uint64_t>(n) * t.element_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(where, " spans ", t.size_bytes, " bytes but ", t.dtype,
                                                     " with ", n, " elements needs ", n * t.element_bytes));
    }
    if (static_cast<uint64_t>(e.integer()) > data_size) {
      return absl::OutOfRangeError(absl::StrCat(where, " ends at data byte ", e.integer(), " but the data section has ",
                                                data_size, " bytes (truncated file?)"));
    }
    t.data = f->file_->data() + data_start + b.integer();
    if (!f->index_.emplace(t.name, f->tensors_.size()).second) {
      return absl::InvalidArgumentError(absl::StrCat(where, " appears twice"));
    }
    f->tensors_.push_back(std::move(t));
  }
  return f;
}

const SafetensorsTensor* SafetensorsFile::Find(absl::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

void SafetensorsDir::Prefault() const {
  for (const auto& f : files_) f->file().Prefault();
}

void SafetensorsDir::ReleasePages() const {
  for (const auto& f : files_) f->file().ReleasePages();
}

absl::StatusOr<std::unique_ptr<SafetensorsDir>> SafetensorsDir::Open(const std::string& dir, FileLoad load) {
  std::unique_ptr<SafetensorsDir> d(new SafetensorsDir());
  d->dir_ = dir;
  std::vector<std::string> files;
  const std::string single = absl::StrCat(dir, "/model.safetensors");
  const std::string index_path = absl::StrCat(dir, "/model.safetensors.index.json");
  if (absl::StatusOr<std::string> index = ReadFileToString(index_path); index.ok()) {
    absl::StatusOr<json::Value> root = json::Parse(*index, index_path);
    if (!root.ok()) return root.status();
    const json::Value* map = root->Find("weight_map");
    if (map == nullptr || !map->is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(index_path, ": missing the \"weight_map\" object"));
    }
    std::set<std::string> shards;
    for (const auto& [tensor, file] : map->members()) {
      if (!file.is_string() || file.str().find('/') != std::string::npos) {
        return absl::InvalidArgumentError(absl::StrCat(index_path, ": tensor '", tensor, "' maps to an invalid file"));
      }
      shards.insert(file.str());
    }
    for (const std::string& s : shards) files.push_back(absl::StrCat(dir, "/", s));
  } else {
    files.push_back(single);
  }
  for (const std::string& path : files) {
    absl::StatusOr<std::unique_ptr<SafetensorsFile>> f = SafetensorsFile::Open(path, load);
    if (!f.ok()) {
      if (f.status().code() == absl::StatusCode::kNotFound) {
        return absl::NotFoundError(absl::StrCat("model directory '", dir, "' has no ", path.substr(dir.size() + 1),
                                                " (expected model.safetensors or model.safetensors.index.json)"));
      }
      return f.status();
    }
    for (const SafetensorsTensor& t : (*f)->tensors()) {
      if (!d->by_name_.emplace(t.name, &t).second) {
        return absl::InvalidArgumentError(absl::StrCat("model directory '", dir, "': tensor '", t.name,
                                                       "' appears in more than one shard"));
      }
    }
    d->files_.push_back(*std::move(f));
  }
  return d;
}

const SafetensorsTensor* SafetensorsDir::Find(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

absl::StatusOr<const SafetensorsTensor*> SafetensorsDir::Get(absl::string_view name) const {
  const SafetensorsTensor* t = Find(name);
  if (t == nullptr) {
    return absl::NotFoundError(absl::StrCat("model directory '", dir_, "': tensor '", name, "' is missing (",
                                            by_name_.size(), " tensors found)"));
  }
  return t;
}

}  // namespace tessel::llm
