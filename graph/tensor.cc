// Tensor types and aligned buffers.
#include "graph/tensor.h"

#include <cassert>
#include <cstdlib>
#include <cstring>
#include <new>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "support/memory.h"

namespace tessel {

std::string Dim::ToString() const { return is_static() ? absl::StrCat(value_) : symbol_; }

absl::string_view LayoutName(Layout l) {
  switch (l) {
    case Layout::kAny: return "any";
    case Layout::kNCHW: return "nchw";
    case Layout::kNHWC: return "nhwc";
    case Layout::kNCHW8c: return "nchw8c";
  }
  return "?";
}

absl::StatusOr<Layout> ParseLayout(absl::string_view name) {
  for (Layout l : {Layout::kAny, Layout::kNCHW, Layout::kNHWC, Layout::kNCHW8c}) {
    if (LayoutName(l) == name) return l;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown layout '", name, "' (expected nchw, nhwc or nchw8c)"));
}

TensorType TensorType::Static(DType t, absl::Span<const int64_t> shape) {
  std::vector<Dim> dims(shape.begin(), shape.end());
  return TensorType(t, std::move(dims));
}

bool TensorType::is_static() const {
  for (const Dim& d : dims) {
    if (!d.is_static()) return false;
  }
  return true;
}

int64_t TensorType::NumElements() const {
  int64_t n = 1;
  for (const Dim& d : dims) {
    if (!d.is_static()) return -1;
    n *= d.value();
  }
  return n;
}

std::vector<int64_t> TensorType::StaticShape() const {
  std::vector<int64_t> s;
  s.reserve(dims.size());
  for (const Dim& d : dims) s.push_back(d.value());
  return s;
}

std::string TensorType::ToString() const {
  std::string s = absl::StrCat(DTypeName(dtype), "[",
                               absl::StrJoin(dims, ",", [](std::string* out, const Dim& d) {
                                 absl::StrAppend(out, d.ToString());
                               }),
                               "]");
  if (layout != Layout::kAny) absl::StrAppend(&s, "@", LayoutName(layout));
  return s;
}

std::string ShapeToString(absl::Span<const int64_t> shape) { return absl::StrCat("[", absl::StrJoin(shape, ","), "]"); }

int64_t NumElements(absl::Span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::shared_ptr<Buffer> Buffer::Allocate(size_t bytes) {
  std::shared_ptr<Buffer> b(new Buffer());
  const size_t rounded = (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  // Zero-filled; 2 MiB pages when large, which come zeroed and stay untouched until first written.
  b->data_ = AllocateZeroedBuffer(rounded == 0 ? kTensorAlignment : rounded);
  if (b->data_ == nullptr) return nullptr;
  b->size_ = bytes;
  b->owned_ = true;
  return b;
}

std::shared_ptr<Buffer> Buffer::Borrow(void* data, size_t bytes, std::shared_ptr<const void> owner) {
  std::shared_ptr<Buffer> b(new Buffer());
  b->data_ = data;
  b->size_ = bytes;
  b->owner_ = std::move(owner);
  return b;
}

Buffer::~Buffer() {
  if (owned_) FreeBuffer(data_);
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
  buffer_ = Buffer::Allocate(byte_size());
  // As a std::vector would: a tensor whose memory could not be had throws (the command boundary reports
  // it in one line) rather than leaving a null buffer for the first access to segfault on.
  if (buffer_ == nullptr) throw std::bad_alloc();
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape, std::shared_ptr<Buffer> buffer, size_t offset)
    : dtype_(dtype), shape_(std::move(shape)), buffer_(std::move(buffer)), offset_(offset) {}

double Tensor::GetAsDouble(int64_t i) const {
  switch (dtype_) {
    case DType::kF32: return data<float>()[i];
    case DType::kF64: return data<double>()[i];
    case DType::kF16: return HalfToFloat(data<uint16_t>()[i]);
    case DType::kBF16: return BF16ToFloat(data<uint16_t>()[i]);
    case DType::kI8: return data<int8_t>()[i];
    case DType::kU8: return data<uint8_t>()[i];
    case DType::kI32: return data<int32_t>()[i];
    case DType::kI64: return static_cast<double>(data<int64_t>()[i]);
    case DType::kI16: return data<int16_t>()[i];
    case DType::kU16: return data<uint16_t>()[i];
    case DType::kU32: return data<uint32_t>()[i];
    case DType::kU64: return static_cast<double>(data<uint64_t>()[i]);
    case DType::kBool: return data<uint8_t>()[i] != 0;
    case DType::kI4: {
      const uint8_t byte = data<uint8_t>()[i / 2];
      int v = (i % 2 == 0) ? (byte & 0xf) : (byte >> 4);
      return v >= 8 ? v - 16 : v;
    }
  }
  return 0;
}

int64_t Tensor::GetAsInt64(int64_t i) const {
  switch (dtype_) {
    case DType::kI64: return data<int64_t>()[i];
    case DType::kI32: return data<int32_t>()[i];
    case DType::kU32: return data<uint32_t>()[i];
    case DType::kU64: return static_cast<int64_t>(data<uint64_t>()[i]);
    default: return static_cast<int64_t>(GetAsDouble(i));
  }
}

void Tensor::SetFromDouble(int64_t i, double v) {
  switch (dtype_) {
    case DType::kF32: data<float>()[i] = static_cast<float>(v); return;
    case DType::kF64: data<double>()[i] = v; return;
    case DType::kF16: data<uint16_t>()[i] = FloatToHalf(static_cast<float>(v)); return;
    case DType::kBF16: data<uint16_t>()[i] = FloatToBF16(static_cast<float>(v)); return;
    default: assert(false && "SetFromDouble needs a float tensor"); return;
  }
}

std::vector<int64_t> Tensor::ToInt64Vector() const {
  std::vector<int64_t> v(num_elements());
  for (int64_t i = 0; i < num_elements(); ++i) v[i] = GetAsInt64(i);
  return v;
}

std::vector<float> Tensor::ToFloatVector() const {
  std::vector<float> v(num_elements());
  for (int64_t i = 0; i < num_elements(); ++i) v[i] = static_cast<float>(GetAsDouble(i));
  return v;
}

Tensor Tensor::Clone() const {
  Tensor t(dtype_, shape_);
  if (byte_size() > 0) std::memcpy(t.raw_data(), raw_data(), byte_size());
  return t;
}

absl::StatusOr<Tensor> Tensor::Reshaped(std::vector<int64_t> shape) const {
  if (tessel::NumElements(shape) != num_elements()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot reshape ", ShapeToString(shape_), " (", num_elements(),
                                                   " elements) to ", ShapeToString(shape)));
  }
  return Tensor(dtype_, std::move(shape), buffer_, offset_);
}

absl::Status Tensor::SetShapeWithin(absl::Span<const int64_t> shape, size_t capacity) {
  for (int64_t d : shape) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("shape ", ShapeToString(shape), " has a negative extent"));
  }
  const size_t bytes = DTypeStorageBytes(dtype_, tessel::NumElements(shape));
  if (bytes > capacity || buffer_ == nullptr || offset_ + bytes > buffer_->size()) {
    return absl::OutOfRangeError(absl::StrCat("shape ", ShapeToString(shape), " needs ", bytes, " bytes, above the ",
                                              capacity, " bytes reserved"));
  }
  shape_.assign(shape.begin(), shape.end());
  return absl::OkStatus();
}

std::vector<int64_t> RowMajorStrides(absl::Span<const int64_t> shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

}  // namespace tessel
