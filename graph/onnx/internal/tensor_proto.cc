// Decoding of ONNX TensorProtos into Tessel tensors. Every size is checked before anything is
// allocated or read, so a hostile file yields an error, never a crash or a huge allocation.
#include "graph/onnx/internal/tensor_proto.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "graph/onnx_data_type.h"

namespace tessel {
namespace onnx_internal {
namespace {

// raw_data and external data are little-endian (onnx.proto); so are Tessel's targets (x86-64, AArch64),
// which lets the bytes be copied as they are.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the ONNX importer assumes a little-endian host");

// Far beyond any real model, and small enough that byte sizes cannot overflow.
constexpr int64_t kMaxElements = int64_t{1} << 48;

absl::StatusOr<std::vector<int64_t>> ShapeOf(const onnx::TensorProto& proto, const std::string& what) {
  std::vector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": negative dimension in dims ", ShapeToString(shape)));
    }
    if (d > 0 && n > kMaxElements / d) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": dims ", ShapeToString(shape), " are too large"));
    }
    n *= d;
  }
  return shape;
}

absl::StatusOr<Tensor> Allocate(DType dtype, std::vector<int64_t> shape, const std::string& what) {
  Tensor t(dtype, std::move(shape));
  if (t.buffer() == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat(what, ": cannot allocate ", t.byte_size(), " bytes"));
  }
  return t;
}

// Stores int32_data values in a narrower element type after checking each one fits.
template <typename T>
absl::Status NarrowInt32(const onnx::TensorProto& proto, int64_t lo, int64_t hi, const std::string& what, T* out) {
  for (int i = 0; i < proto.int32_data_size(); ++i) {
    const int32_t v = proto.int32_data(i);
    if (v < lo || v > hi) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": int32_data[", i, "] = ", v, " does not fit ",
                                                     OnnxDataTypeName(proto.data_type()), " (range ", lo, "..", hi, ")"));
    }
    out[i] = static_cast<T>(v);
  }
  return absl::OkStatus();
}

int TypedValueCount(const onnx::TensorProto& p) {
  return p.float_data_size() + p.int32_data_size() + p.int64_data_size() + p.double_data_size() + p.uint64_data_size() +
         p.string_data_size();
}

// Values in the typed repeated fields: float_data, double_data, int64_data, or int32_data for every narrower type
// (float16 and bfloat16 as their bit patterns), as onnx.proto specifies.
absl::StatusOr<Tensor> DecodeTyped(const onnx::TensorProto& proto, DType dtype, std::vector<int64_t> shape,
                                   const std::string& what) {
  const int64_t n = NumElements(shape);
  const char* field = "int32_data";
  int have = proto.int32_data_size();
  if (dtype == DType::kF32) {
    field = "float_data";
    have = proto.float_data_size();
  } else if (dtype == DType::kI64) {
    field = "int64_data";
    have = proto.int64_data_size();
  } else if (dtype == DType::kF64) {
    field = "double_data";
    have = proto.double_data_size();
  } else if (dtype == DType::kU32 || dtype == DType::kU64) {
    field = "uint64_data";
    have = proto.uint64_data_size();
  }
  const int total = TypedValueCount(proto);
  if (total == 0 && n > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": has no data (no raw_data, no ", field, " values and no external data)"));
  }
  if (total != have) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", OnnxDataTypeName(proto.data_type()), " values belong in ",
                                                   field, ", but other typed fields hold ", total - have, " values"));
  }
  if (have != n) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": dims ", ShapeToString(shape), " need ", n, " values but ", field, " has ", have));
  }
  absl::StatusOr<Tensor> t = Allocate(dtype, std::move(shape), what);
  if (!t.ok()) return t.status();
  absl::Status status;
  switch (dtype) {
    case DType::kF32:
      if (n > 0) std::memcpy(t->raw_data(), proto.float_data().data(), n * sizeof(float));
      break;
    case DType::kI64:
      if (n > 0) std::memcpy(t->raw_data(), proto.int64_data().data(), n * sizeof(int64_t));
      break;
    case DType::kF64:
      if (n > 0) std::memcpy(t->raw_data(), proto.double_data().data(), n * sizeof(double));
      break;
    case DType::kI32:
      if (n > 0) std::memcpy(t->raw_data(), proto.int32_data().data(), n * sizeof(int32_t));
      break;
    // Every narrower type from int32_data, range-checked (float16 and bfloat16 as their bits).
    case DType::kI8: status = NarrowInt32(proto, -128, 127, what, t->data<int8_t>()); break;
    case DType::kU8: status = NarrowInt32(proto, 0, 255, what, t->data<uint8_t>()); break;
    case DType::kBool: status = NarrowInt32(proto, 0, 1, what, t->data<uint8_t>()); break;
    case DType::kF16:
    case DType::kBF16:
    case DType::kU16: status = NarrowInt32(proto, 0, 65535, what, t->data<uint16_t>()); break;
    case DType::kI16: status = NarrowInt32(proto, -32768, 32767, what, t->data<int16_t>()); break;
    case DType::kU64:
      if (n > 0) std::memcpy(t->raw_data(), proto.uint64_data().data(), n * sizeof(uint64_t));
      break;
    case DType::kU32:
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t v = proto.uint64_data(static_cast<int>(i));
        if (v > 0xFFFFFFFFu) {
          return absl::InvalidArgumentError(absl::StrCat(what, ": uint64_data value ", v, " at ", i,
                                                         " is out of range for UINT32"));
        }
        t->data<uint32_t>()[i] = static_cast<uint32_t>(v);
      }
      break;
    case DType::kI4:
      return absl::InternalError(absl::StrCat(what, ": ONNX has no packed int4 type"));
  }
  if (!status.ok()) return status;
  return t;
}

// The side file named by an external-data location. ONNX requires it to sit in or below the model's
// directory: absolute paths and ".." are refused, so the model file alone cannot make the importer
// read arbitrary files. Symbolic links are followed, because model stores (Bazel runfiles, the
// Hugging Face cache) link each file to a blob elsewhere.
absl::StatusOr<std::string> ResolveExternalPath(const std::string& base_dir, const std::string& location,
                                                const std::string& what) {
  if (location.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": external data has no 'location' entry"));
  }
  if (location.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": external data location contains a NUL byte"));
  }
  if (location[0] == '/' || location[0] == '\\' || (location.size() > 1 && location[1] == ':')) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": external data location '", location,
                                                   "' is an absolute path; it must be relative to the model's "
                                                   "directory"));
  }
  for (absl::string_view part : absl::StrSplit(location, absl::ByAnyChar("/\\"))) {
    if (part == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": external data location '", location, "' leaves the model's directory through '..'"));
    }
  }
  return absl::StrCat(base_dir.empty() ? "." : base_dir, "/", location);
}

absl::StatusOr<int64_t> ParseExternalInt(const std::string& key, const std::string& value, const std::string& what) {
  int64_t v = 0;
  if (!absl::SimpleAtoi(value, &v) || v < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": external data '", key, "' is '", value, "', expected a byte count >= 0"));
  }
  return v;
}

class FileCloser {
 public:
  explicit FileCloser(int fd) : fd_(fd) {}
  ~FileCloser() { close(fd_); }
  FileCloser(const FileCloser&) = delete;
  FileCloser& operator=(const FileCloser&) = delete;

 private:
  int fd_;
};

absl::StatusOr<Tensor> ReadExternal(const onnx::TensorProto& proto, DType dtype, std::vector<int64_t> shape,
                                    const std::string& base_dir, const std::string& what) {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
  for (const onnx::StringStringEntryProto& kv : proto.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      absl::StatusOr<int64_t> v = ParseExternalInt(kv.key(), kv.value(), what);
      if (!v.ok()) return v.status();
      (kv.key() == "offset" ? offset : length) = *v;
    }
  }
  const int64_t expected = static_cast<int64_t>(DTypeStorageBytes(dtype, NumElements(shape)));
  if (length >= 0 && length != expected) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": external data length is ", length, " bytes but dims ",
                                                   ShapeToString(shape), " of ", DTypeName(dtype), " need ", expected));
  }
  absl::StatusOr<std::string> path = ResolveExternalPath(base_dir, location, what);
  if (!path.ok()) return path.status();

  const int fd = open(path->c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    const std::string msg = absl::StrCat(what, ": cannot open external data file '", *path, "': ", std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(msg);
    if (err == EACCES) return absl::PermissionDeniedError(msg);
    return absl::InvalidArgumentError(msg);
  }
  FileCloser closer(fd);
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": external data '", *path, "' is not a regular file"));
  }
  const int64_t size = st.st_size;
  if (offset > size || expected > size - offset) {
    return absl::OutOfRangeError(absl::StrCat(what, ": external data of ", expected, " bytes at offset ", offset,
                                              " runs past the end of '", *path, "' (", size, " bytes)"));
  }
  absl::StatusOr<Tensor> t = Allocate(dtype, std::move(shape), what);
  if (!t.ok()) return t.status();
  char* dst = static_cast<char*>(t->raw_data());
  int64_t done = 0;
  while (done < expected) {
    const ssize_t got = pread(fd, dst + done, expected - done, offset + done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      return absl::DataLossError(absl::StrCat(what, ": reading '", *path, "' at byte ", offset + done,
                                              " failed: ", got == 0 ? "unexpected end of file" : std::strerror(errno)));
    }
    done += got;
  }
  return t;
}

}  // namespace

absl::StatusOr<DType> DTypeFromOnnx(int32_t onnx_type, const std::string& what) {
  absl::StatusOr<DType> dtype = DTypeFromOnnxDataType(onnx_type);
  if (dtype.ok()) return dtype;
  return absl::Status(dtype.status().code(),
                      absl::StrCat(what, ": ", dtype.status().message(),
                                   dtype.status().code() == absl::StatusCode::kUnimplemented
                                       ? "; convert the model, e.g. DOUBLE to FLOAT, before importing"
                                       : ""));
}

absl::StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& proto, const std::string& base_dir,
                                       const std::string& what) {
  if (proto.has_segment()) {
    return absl::UnimplementedError(absl::StrCat(what, ": segmented tensors are not supported"));
  }
  absl::StatusOr<DType> dtype = DTypeFromOnnx(proto.data_type(), what);
  if (!dtype.ok()) return dtype.status();
  absl::StatusOr<std::vector<int64_t>> shape = ShapeOf(proto, what);
  if (!shape.ok()) return shape.status();

  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    return ReadExternal(proto, *dtype, std::move(*shape), base_dir, what);
  }
  if (!proto.has_raw_data()) return DecodeTyped(proto, *dtype, std::move(*shape), what);

  if (TypedValueCount(proto) > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": holds both raw_data and typed values; ONNX allows only one"));
  }
  const size_t expected = DTypeStorageBytes(*dtype, NumElements(*shape));
  if (proto.raw_data().size() != expected) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": raw_data has ", proto.raw_data().size(), " bytes but dims ",
                                                   ShapeToString(*shape), " of ", DTypeName(*dtype), " need ",
                                                   expected));
  }
  absl::StatusOr<Tensor> t = Allocate(*dtype, std::move(*shape), what);
  if (!t.ok()) return t.status();
  if (expected > 0) std::memcpy(t->raw_data(), proto.raw_data().data(), expected);
  return t;
}

}  // namespace onnx_internal
}  // namespace tessel
