// GGUF parsing with a bounds-checked reader: every length, count, dimension and offset is checked
// against the bytes that are actually there before it is used.
#include "llm/gguf/gguf.h"

#include <cstring>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tessel::llm {
namespace {

size_t ScalarSize(GgufType t) {
  switch (t) {
    case GgufType::kUint8:
    case GgufType::kInt8:
    case GgufType::kBool:
      return 1;
    case GgufType::kUint16:
    case GgufType::kInt16:
      return 2;
    case GgufType::kUint32:
    case GgufType::kInt32:
    case GgufType::kFloat32:
      return 4;
    case GgufType::kUint64:
    case GgufType::kInt64:
    case GgufType::kFloat64:
      return 8;
    default:
      return 0;  // strings and arrays have no fixed size
  }
}

bool IsValueType(uint32_t t) { return t <= static_cast<uint32_t>(GgufType::kFloat64); }

bool IsIntegerType(GgufType t) {
  switch (t) {
    case GgufType::kUint8:
    case GgufType::kInt8:
    case GgufType::kUint16:
    case GgufType::kInt16:
    case GgufType::kUint32:
    case GgufType::kInt32:
    case GgufType::kUint64:
    case GgufType::kInt64:
      return true;
    default:
      return false;
  }
}

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Reads element `i` of integer type `t` at `p`; false when an unsigned 64-bit value exceeds int64.
bool LoadInt(GgufType t, const uint8_t* p, int64_t* out) {
  switch (t) {
    case GgufType::kUint8: *out = Load<uint8_t>(p); return true;
    case GgufType::kInt8: *out = Load<int8_t>(p); return true;
    case GgufType::kUint16: *out = Load<uint16_t>(p); return true;
    case GgufType::kInt16: *out = Load<int16_t>(p); return true;
    case GgufType::kUint32: *out = Load<uint32_t>(p); return true;
    case GgufType::kInt32: *out = Load<int32_t>(p); return true;
    case GgufType::kInt64: *out = Load<int64_t>(p); return true;
    case GgufType::kUint64: {
      const uint64_t v = Load<uint64_t>(p);
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
      *out = static_cast<int64_t>(v);
      return true;
    }
    default:
      return false;
  }
}

bool LoadFloat(GgufType t, const uint8_t* p, double* out) {
  if (t == GgufType::kFloat32) {
    *out = Load<float>(p);
    return true;
  }
  if (t == GgufType::kFloat64) {
    *out = Load<double>(p);
    return true;
  }
  int64_t i;
  if (!LoadInt(t, p, &i)) return false;
  *out = static_cast<double>(i);
  return true;
}

// Bounds-checked little-endian cursor over the file bytes.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size, const std::string& path) : data_(data), size_(size), path_(path) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }
  const uint8_t* here() const { return data_ + pos_; }

  absl::Status Need(uint64_t n, absl::string_view what) const {
    if (n > remaining()) {
      return absl::DataLossError(absl::StrCat("gguf '", path_, "': file is truncated: ", what, " needs ", n,
                                              " bytes at byte offset ", pos_, " but the file has ", size_,
                                              " bytes"));
    }
    return absl::OkStatus();
  }

  template <typename T>
  absl::StatusOr<T> Read(absl::string_view what) {
    if (absl::Status s = Need(sizeof(T), what); !s.ok()) return s;
    T v = Load<T>(here());
    pos_ += sizeof(T);
    return v;
  }

  absl::StatusOr<absl::string_view> ReadString(absl::string_view what) {
    absl::StatusOr<uint64_t> len = Read<uint64_t>(what);
    if (!len.ok()) return len.status();
    if (absl::Status s = Need(*len, what); !s.ok()) return s;
    absl::string_view v(reinterpret_cast<const char*>(here()), *len);
    pos_ += *len;
    return v;
  }

  void Skip(size_t n) { pos_ += n; }
  std::string prefix() const { return absl::StrCat("gguf '", path_, "': "); }

  absl::Status Error(absl::string_view msg) const {
    return absl::InvalidArgumentError(absl::StrCat("gguf '", path_, "': ", msg));
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  const std::string& path_;
};

absl::Status ParseValue(Reader& r, GgufType type, const std::string& key, GgufValue* out) {
  const size_t start = r.pos();
  out->type = type;
  const std::string what = absl::StrCat("metadata '", key, "'");
  if (type == GgufType::kString) {
    absl::StatusOr<absl::string_view> s = r.ReadString(what);
    if (!s.ok()) return s.status();
    out->strings.push_back(*s);
  } else if (type == GgufType::kArray) {
    absl::StatusOr<uint32_t> elem = r.Read<uint32_t>(what);
    if (!elem.ok()) return elem.status();
    if (!IsValueType(*elem)) {
      return r.Error(absl::StrCat(what, " is an array of unknown value type ", *elem, " (byte offset ",
                                  r.pos() - 4, ")"));
    }
    out->elem_type = static_cast<GgufType>(*elem);
    if (out->elem_type == GgufType::kArray) {
      return absl::UnimplementedError(
          absl::StrCat(r.prefix(), what, " is an array of arrays, which Tessel does not read"));
    }
    absl::StatusOr<uint64_t> count = r.Read<uint64_t>(what);
    if (!count.ok()) return count.status();
    out->count = *count;
    if (out->elem_type == GgufType::kString) {
      // Each string takes at least its 8-byte length: bound the count before reserving.
      if (*count > r.remaining() / 8) {
        return absl::DataLossError(absl::StrCat(r.prefix(), "file is truncated: ", what, " declares ", *count,
                                                " strings at byte offset ", r.pos(), " but only ", r.remaining(),
                                                " bytes remain"));
      }
      out->strings.reserve(*count);
      for (uint64_t i = 0; i < *count; ++i) {
        absl::StatusOr<absl::string_view> s = r.ReadString(what);
        if (!s.ok()) return s.status();
        out->strings.push_back(*s);
      }
    } else {
      const size_t esize = ScalarSize(out->elem_type);
      if (*count > r.remaining() / esize) {
        return absl::DataLossError(absl::StrCat(r.prefix(), "file is truncated: ", what, " declares ", *count,
                                                " elements of ", GgufTypeName(out->elem_type), " at byte offset ",
                                                r.pos(), " but only ", r.remaining(), " bytes remain"));
      }
      out->payload = r.here();
      r.Skip(*count * esize);
    }
  } else {
    const size_t size = ScalarSize(type);
    if (absl::Status s = r.Need(size, what); !s.ok()) return s;
    out->payload = r.here();
    if (type == GgufType::kBool && *out->payload > 1) {
      return r.Error(absl::StrCat(what, " is a bool with byte value ", int{*out->payload}, " at byte offset ",
                                  r.pos(), " (expected 0 or 1)"));
    }
    r.Skip(size);
  }
  out->encoded = absl::string_view(reinterpret_cast<const char*>(r.here()) - (r.pos() - start), r.pos() - start);
  return absl::OkStatus();
}

}  // namespace

absl::string_view GgufTypeName(GgufType t) {
  switch (t) {
    case GgufType::kUint8: return "uint8";
    case GgufType::kInt8: return "int8";
    case GgufType::kUint16: return "uint16";
    case GgufType::kInt16: return "int16";
    case GgufType::kUint32: return "uint32";
    case GgufType::kInt32: return "int32";
    case GgufType::kFloat32: return "float32";
    case GgufType::kBool: return "bool";
    case GgufType::kString: return "string";
    case GgufType::kArray: return "array";
    case GgufType::kUint64: return "uint64";
    case GgufType::kInt64: return "int64";
    case GgufType::kFloat64: return "float64";
  }
  return "unknown";
}

int64_t GgufTensorInfo::num_elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string GgufTensorInfo::ShapeString() const { return absl::StrCat("[", absl::StrJoin(dims, ", "), "]"); }

absl::StatusOr<std::unique_ptr<GgufFile>> GgufFile::Open(const std::string& path, FileLoad load) {
  absl::StatusOr<std::shared_ptr<const MappedFile>> file = MappedFile::Open(path, load);
  if (!file.ok()) return file.status();
  return Parse(*std::move(file));
}

absl::StatusOr<std::unique_ptr<GgufFile>> GgufFile::Parse(std::shared_ptr<const MappedFile> bytes) {
  std::unique_ptr<GgufFile> g(new GgufFile());
  g->file_ = std::move(bytes);
  const std::string& path = g->file_->path();
  Reader r(g->file_->data(), g->file_->size(), path);

  absl::StatusOr<uint32_t> magic = r.Read<uint32_t>("the magic number");
  if (!magic.ok()) return magic.status();
  if (*magic != kGgufMagic) {
    return r.Error(absl::StrCat("not a GGUF file: the first 4 bytes are ",
                                absl::StrCat("0x", absl::Hex(*magic, absl::kZeroPad8)),
                                " instead of \"GGUF\" (is this a safetensors or legacy GGML file?)"));
  }
  absl::StatusOr<uint32_t> version = r.Read<uint32_t>("the version");
  if (!version.ok()) return version.status();
  if (*version == 0x03000000u || *version == 0x02000000u) {
    return absl::UnimplementedError(
        absl::StrCat("gguf '", path, "': big-endian GGUF files are not supported; convert it on a little-endian host"));
  }
  if (*version != 2 && *version != 3) {
    return absl::UnimplementedError(
        absl::StrCat("gguf '", path, "': GGUF version ", *version, " is not supported (Tessel reads versions 2 and 3)"));
  }
  g->version_ = *version;
  absl::StatusOr<uint64_t> n_tensors = r.Read<uint64_t>("the tensor count");
  if (!n_tensors.ok()) return n_tensors.status();
  absl::StatusOr<uint64_t> n_kv = r.Read<uint64_t>("the metadata count");
  if (!n_kv.ok()) return n_kv.status();
  // A key-value takes at least 8 (key length) + 4 (type) + 1 bytes; a tensor info at least 8 + 4 + 4 + 8.
  if (*n_kv > r.remaining() / 13) {
    return absl::DataLossError(absl::StrCat("gguf '", path, "': header declares ", *n_kv,
                                            " metadata entries but the file has only ", r.remaining(),
                                            " bytes after the header (truncated or corrupt)"));
  }
  if (*n_tensors > r.remaining() / 24) {
    return absl::DataLossError(absl::StrCat("gguf '", path, "': header declares ", *n_tensors,
                                            " tensors but the file has only ", r.remaining(),
                                            " bytes after the header (truncated or corrupt)"));
  }

  g->metadata_.reserve(*n_kv);
  for (uint64_t i = 0; i < *n_kv; ++i) {
    const size_t key_pos = r.pos();
    absl::StatusOr<absl::string_view> key = r.ReadString(absl::StrCat("the key of metadata entry ", i));
    if (!key.ok()) return key.status();
    std::string k(*key);
    absl::StatusOr<uint32_t> type = r.Read<uint32_t>(absl::StrCat("the type of metadata '", k, "'"));
    if (!type.ok()) return type.status();
    if (!IsValueType(*type)) {
      return r.Error(absl::StrCat("metadata '", k, "' has unknown value type ", *type, " (byte offset ", r.pos() - 4,
                                  ")"));
    }
    GgufValue v;
    if (absl::Status s = ParseValue(r, static_cast<GgufType>(*type), k, &v); !s.ok()) return s;
    if (!g->metadata_index_.emplace(k, g->metadata_.size()).second) {
      return r.Error(absl::StrCat("metadata key '", k, "' appears twice (second at byte offset ", key_pos, ")"));
    }
    g->metadata_.emplace_back(std::move(k), std::move(v));
  }

  if (const GgufValue* a = g->Find("general.alignment")) {
    if (a->type != GgufType::kUint32) {
      return r.Error(absl::StrCat("metadata 'general.alignment' must be a uint32, not ", GgufTypeName(a->type)));
    }
    const uint32_t align = Load<uint32_t>(a->payload);
    if (align == 0 || (align & (align - 1)) != 0) {
      return r.Error(absl::StrCat("metadata 'general.alignment' is ", align, "; it must be a power of two"));
    }
    g->alignment_ = align;
  }

  g->tensors_.reserve(*n_tensors);
  for (uint64_t i = 0; i < *n_tensors; ++i) {
    GgufTensorInfo t;
    absl::StatusOr<absl::string_view> name = r.ReadString(absl::StrCat("the name of tensor ", i));
    if (!name.ok()) return name.status();
    t.name = std::string(*name);
    const std::string what = absl::StrCat("tensor '", t.name, "'");
    absl::StatusOr<uint32_t> n_dims = r.Read<uint32_t>(what);
    if (!n_dims.ok()) return n_dims.status();
    if (*n_dims == 0 || *n_dims > kGgufMaxDims) {
      return r.Error(absl::StrCat(what, " has ", *n_dims, " dimensions (byte offset ", r.pos() - 4,
                                  "); GGUF allows 1 to ", kGgufMaxDims));
    }
    int64_t elements = 1;
    for (uint32_t d = 0; d < *n_dims; ++d) {
      absl::StatusOr<uint64_t> dim = r.Read<uint64_t>(what);
      if (!dim.ok()) return dim.status();
      if (*dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
          (*dim != 0 && elements > std::numeric_limits<int64_t>::max() / static_cast<int64_t>(*dim))) {
        return r.Error(absl::StrCat(what, " has an impossibly large shape (dimension ", d, " is ", *dim, ")"));
      }
      t.dims.push_back(static_cast<int64_t>(*dim));
      elements *= static_cast<int64_t>(*dim);
    }
    absl::StatusOr<uint32_t> type = r.Read<uint32_t>(what);
    if (!type.ok()) return type.status();
    const GgmlTypeInfo* info = FindGgmlType(*type);
    if (info == nullptr) {
      return r.Error(absl::StrCat(what, " has unknown ggml type id ", *type, " (byte offset ", r.pos() - 4,
                                  "); the file may come from a newer ggml"));
    }
    t.type = static_cast<GgmlType>(*type);
    if (t.dims[0] % info->block_size != 0) {
      return r.Error(absl::StrCat(what, " has rows of ", t.dims[0], " elements, not a multiple of the ", info->name,
                                  " block size ", info->block_size));
    }
    if (elements / info->block_size > std::numeric_limits<int64_t>::max() / info->block_bytes) {
      return r.Error(absl::StrCat(what, " is impossibly large"));
    }
    t.size_bytes = static_cast<uint64_t>(elements / info->block_size * info->block_bytes);
    absl::StatusOr<uint64_t> offset = r.Read<uint64_t>(what);
    if (!offset.ok()) return offset.status();
    t.offset = *offset;
    if (t.offset % g->alignment_ != 0) {
      return r.Error(absl::StrCat(what, " has data offset ", t.offset, ", not a multiple of the alignment ",
                                  g->alignment_));
    }
    if (!g->tensor_index_.emplace(t.name, g->tensors_.size()).second) {
      return r.Error(absl::StrCat("tensor name '", t.name, "' appears twice"));
    }
    g->tensors_.push_back(std::move(t));
  }

  const uint64_t header_end = r.pos();
  g->data_offset_ = (header_end + g->alignment_ - 1) / g->alignment_ * g->alignment_;
  const uint64_t file_size = g->file_->size();
  const uint64_t data_size = g->data_offset_ <= file_size ? file_size - g->data_offset_ : 0;
  for (GgufTensorInfo& t : g->tensors_) {
    if (t.offset > data_size || t.size_bytes > data_size - t.offset) {
      return absl::OutOfRangeError(absl::StrCat(
          "gguf '", path, "': tensor '", t.name, "' (", GetGgmlTypeInfo(t.type).name, " ", t.ShapeString(),
          ", ", t.size_bytes, " bytes at data offset ", t.offset, ") extends past the end of the file: the data section",
          " holds ", data_size, " bytes from byte offset ", g->data_offset_, " (truncated or corrupt file)"));
    }
    t.data = g->file_->data() + g->data_offset_ + t.offset;
  }
  return g;
}

const GgufValue* GgufFile::Find(absl::string_view key) const {
  auto it = metadata_index_.find(key);
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second].second;
}

absl::Status GgufFile::TypeError(absl::string_view key, const GgufValue& v, absl::string_view expected) const {
  std::string actual(GgufTypeName(v.type));
  if (v.is_array()) actual = absl::StrCat("array of ", GgufTypeName(v.elem_type));
  return absl::InvalidArgumentError(
      absl::StrCat("gguf '", path(), "': metadata '", key, "' is ", actual, "; expected ", expected));
}

namespace {
absl::Status Missing(const std::string& path, absl::string_view key) {
  return absl::NotFoundError(absl::StrCat("gguf '", path, "': metadata '", key, "' is missing"));
}
}  // namespace

absl::StatusOr<std::string> GgufFile::GetString(absl::string_view key) const {
  const GgufValue* v = Find(key);
  if (v == nullptr) return Missing(path(), key);
  if (v->type != GgufType::kString) return TypeError(key, *v, "a string");
  return std::string(v->strings[0]);
}

absl::StatusOr<int64_t> GgufFile::GetInt(absl::string_view key) const {
  const GgufValue* v = Find(key);
  if (v == nullptr) return Missing(path(), key);
  int64_t out;
  if (!IsIntegerType(v->type) || !LoadInt(v->type, v->payload, &out)) return TypeError(key, *v, "an integer");
  return out;
}

absl::StatusOr<double> GgufFile::GetFloat(absl::string_view key) const {
  const GgufValue* v = Find(key);
  if (v == nullptr) return Missing(path(), key);
  double out;
  if (v->is_array() || v->type == GgufType::kString || v->type == GgufType::kBool ||
      !LoadFloat(v->type, v->payload, &out)) {
    return TypeError(key, *v, "a number");
  }
  return out;
}

absl::StatusOr<bool> GgufFile::GetBool(absl::string_view key) const {
  const GgufValue* v = Find(key);
  if (v == nullptr) return Missing(path(), key);
  if (v->type != GgufType::kBool) return TypeError(key, *v, "a bool");
  return *v->payload != 0;
}

absl::StatusOr<absl::Span<const absl::string_view>> GgufFile::GetStringArray(absl::string_view key) const {
  const GgufValue* v = Find(key);
  if (v == nullptr) return Missing(path(), key);
  if (!v->is_array() || v->elem_type != GgufType::kString) return TypeError(key, *v, "an array of strings");
  return absl::MakeConstSpan(v->strings);
}

absl::StatusOr<std::vector<double>> GgufFile::GetFloatArray(absl::string_view key) const {
  const GgufValue* v = Find(key);
  if (v == nullptr) return Missing(path(), key);
  if (!v->is_array() || v->elem_type == GgufType::kString || v->elem_type == GgufType::kBool) {
    return TypeError(key, *v, "an array of numbers");
  }
  std::vector<double> out(v->count);
  const size_t esize = ScalarSize(v->elem_type);
  for (uint64_t i = 0; i < v->count; ++i) {
    if (!LoadFloat(v->elem_type, v->payload + i * esize, &out[i])) {
      return TypeError(key, *v, "an array of numbers that fit a double");
    }
  }
  return out;
}

absl::StatusOr<std::vector<int64_t>> GgufFile::GetIntArray(absl::string_view key) const {
  const GgufValue* v = Find(key);
  if (v == nullptr) return Missing(path(), key);
  if (!v->is_array() || !IsIntegerType(v->elem_type)) return TypeError(key, *v, "an array of integers");
  std::vector<int64_t> out(v->count);
  const size_t esize = ScalarSize(v->elem_type);
  for (uint64_t i = 0; i < v->count; ++i) {
    if (!LoadInt(v->elem_type, v->payload + i * esize, &out[i])) {
      return TypeError(key, *v, "an array of integers that fit int64");
    }
  }
  return out;
}

absl::StatusOr<int64_t> GgufFile::GetIntOr(absl::string_view key, int64_t fallback) const {
  return Has(key) ? GetInt(key) : fallback;
}

absl::StatusOr<double> GgufFile::GetFloatOr(absl::string_view key, double fallback) const {
  return Has(key) ? GetFloat(key) : fallback;
}

absl::StatusOr<bool> GgufFile::GetBoolOr(absl::string_view key, bool fallback) const {
  return Has(key) ? GetBool(key) : fallback;
}

absl::StatusOr<std::string> GgufFile::GetStringOr(absl::string_view key, absl::string_view fallback) const {
  return Has(key) ? GetString(key) : std::string(fallback);
}

const GgufTensorInfo* GgufFile::FindTensor(absl::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

absl::StatusOr<const GgufTensorInfo*> GgufFile::GetTensor(absl::string_view name) const {
  const GgufTensorInfo* t = FindTensor(name);
  if (t == nullptr) {
    return absl::NotFoundError(absl::StrCat("gguf '", path(), "': tensor '", name, "' is missing (the file has ",
                                            tensors_.size(), " tensors)"));
  }
  return t;
}

}  // namespace tessel::llm
