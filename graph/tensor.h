// Tensor types (dtype, static or symbolic shape, layout) and concrete tensors backed by 64-byte
// aligned, shareable buffers. Constant weights are shared between graphs without copies.
#ifndef TESSEL_GRAPH_TENSOR_H_
#define TESSEL_GRAPH_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/dtype.h"

namespace tessel {

inline constexpr size_t kTensorAlignment = 64;

// One dimension: a static extent, or a named symbol such as "batch" or "seq".
class Dim {
 public:
  Dim() = default;
  Dim(int64_t v) : value_(v) {}  // NOLINT: implicit from an extent is the common case
  static Dim Symbol(std::string name) {
    Dim d;
    d.value_ = -1;
    d.symbol_ = std::move(name);
    return d;
  }
  bool is_static() const { return symbol_.empty(); }
  int64_t value() const { return value_; }
  const std::string& symbol() const { return symbol_; }
  bool operator==(const Dim& o) const { return value_ == o.value_ && symbol_ == o.symbol_; }
  bool operator!=(const Dim& o) const { return !(*this == o); }
  std::string ToString() const;

 private:
  int64_t value_ = 0;
  std::string symbol_;
};

enum class Layout : uint8_t {
  kAny,   // no particular layout (the default; ONNX tensors are NCHW by convention)
  kNCHW,
  kNHWC,
  kNCHW8c,  // blocked channels, for kernels that ask for it
};
absl::string_view LayoutName(Layout l);
absl::StatusOr<Layout> ParseLayout(absl::string_view name);

struct TensorType {
  DType dtype = DType::kF32;
  std::vector<Dim> dims;
  Layout layout = Layout::kAny;

  TensorType() = default;
  TensorType(DType t, std::vector<Dim> d, Layout l = Layout::kAny) : dtype(t), dims(std::move(d)), layout(l) {}
  static TensorType Static(DType t, absl::Span<const int64_t> shape);

  int rank() const { return static_cast<int>(dims.size()); }
  bool is_static() const;
  // Product of the extents; -1 when some dimension is symbolic.
  int64_t NumElements() const;
  // The static shape; only valid when is_static().
  std::vector<int64_t> StaticShape() const;
  bool operator==(const TensorType& o) const { return dtype == o.dtype && dims == o.dims && layout == o.layout; }
  bool operator!=(const TensorType& o) const { return !(*this == o); }
  // "f32[N,3,224,224]" (with "@nhwc" when a layout is set).
  std::string ToString() const;
};

std::string ShapeToString(absl::Span<const int64_t> shape);
int64_t NumElements(absl::Span<const int64_t> shape);

// 64-byte aligned bytes. Either owned (allocated here) or borrowed from an owner kept alive with it
// (for example an mmapped file).
class Buffer {
 public:
  static std::shared_ptr<Buffer> Allocate(size_t bytes);  // zero-filled
  static std::shared_ptr<Buffer> Borrow(void* data, size_t bytes, std::shared_ptr<const void> owner);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() { return data_; }
  const void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  Buffer() = default;
  void* data_ = nullptr;
  size_t size_ = 0;
  bool owned_ = false;
  std::shared_ptr<const void> owner_;
};

// A concrete tensor: dtype, static shape and a view into a buffer. Copies share the buffer.
class Tensor {
 public:
  Tensor() = default;
  // Allocates zero-filled, aligned storage.
  Tensor(DType dtype, std::vector<int64_t> shape);
  Tensor(DType dtype, std::vector<int64_t> shape, std::shared_ptr<Buffer> buffer, size_t offset = 0);

  template <typename T>
  static Tensor FromVector(std::vector<int64_t> shape, const std::vector<T>& values) {
    Tensor t(DTypeOf<T>::value, std::move(shape));
    T* p = t.data<T>();
    for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.num_elements(); ++i) p[i] = values[i];
    return t;
  }
  static Tensor Scalar(float v) { return FromVector<float>({}, {v}); }

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int i) const { return shape_[i]; }
  int64_t num_elements() const { return tessel::NumElements(shape_); }
  size_t byte_size() const { return DTypeStorageBytes(dtype_, num_elements()); }
  bool defined() const { return buffer_ != nullptr; }
  TensorType type() const { return TensorType::Static(dtype_, shape_); }
  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
  size_t offset() const { return offset_; }

  void* raw_data() { return static_cast<char*>(buffer_->data()) + offset_; }
  const void* raw_data() const { return static_cast<const char*>(buffer_->data()) + offset_; }
  template <typename T>
  T* data() {
    return static_cast<T*>(raw_data());
  }
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(raw_data());
  }

  // Element i converted to double / int64 (any dtype); for small tensors such as shapes and tests.
  double GetAsDouble(int64_t i) const;
  int64_t GetAsInt64(int64_t i) const;
  // Element i of a float tensor (f32, f64, f16, bf16) set to v, rounded to the nearest; for the reference
  // kernels that compute in double.
  void SetFromDouble(int64_t i, double v);
  std::vector<int64_t> ToInt64Vector() const;
  std::vector<float> ToFloatVector() const;

  // A deep copy with its own buffer.
  Tensor Clone() const;
  // Same buffer, new shape with the same element count.
  absl::StatusOr<Tensor> Reshaped(std::vector<int64_t> shape) const;
  // Same buffer and offset, another shape whose bytes fit in `capacity` bytes from the offset (a
  // data-dependent extent within its planned bound); reuses the shape's storage.
  absl::Status SetShapeWithin(absl::Span<const int64_t> shape, size_t capacity);

 private:
  DType dtype_ = DType::kF32;
  std::vector<int64_t> shape_;
  std::shared_ptr<Buffer> buffer_;
  size_t offset_ = 0;
};

// Row-major strides of a shape, in elements.
std::vector<int64_t> RowMajorStrides(absl::Span<const int64_t> shape);

}  // namespace tessel

#endif  // TESSEL_GRAPH_TENSOR_H_
