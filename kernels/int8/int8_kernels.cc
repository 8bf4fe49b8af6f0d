// Dispatch of quantized nodes to the u8 x s8 GEMM kernels (VNNI, NEON dotprod, NEON i8mm, SVE), with implicit
// GEMM or im2col for convolutions.
#include "kernels/int8/int8_kernels.h"

#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/nn_params.h"
#include "kernels/int8/requantize.h"

namespace tessel {
namespace {

// Everything packing reads (weights, bias, requantization, input zero point): a cache entry is reused only
// when it matches, since a freed weight tensor's address can come back holding other weights.
size_t PackingHash(const Node& node, const Tensor& w, const Tensor* bias, int64_t n, int64_t k,
                   int64_t mmla_segment_len, bool wide) {
  size_t h = std::hash<std::string_view>()(std::string_view(static_cast<const char*>(w.raw_data()), n * k));
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  if (bias != nullptr) {
    mix(std::hash<std::string_view>()(std::string_view(static_cast<const char*>(bias->raw_data()), n * 4)));
  }
  mix(static_cast<size_t>(n));
  mix(static_cast<size_t>(k));
  mix(static_cast<size_t>(mmla_segment_len));
  mix(static_cast<size_t>(wide));
  mix(static_cast<size_t>(node.GetInt("x_zero_point", 0)));
  for (int64_t v : node.GetInts("multiplier")) mix(static_cast<size_t>(v));
  for (int64_t v : node.GetInts("shift")) mix(static_cast<size_t>(v));
  return h;
}

// Packed weights shared by every preparation of the same weight (and bias) tensors, i8mm layout
// (mmla_segment_len 0: none), AVX2 layout (wide) and output columns [c0, c1) (of W [n, k]).
std::shared_ptr<const PackedQGemmWeights> Packed(const Node& node, const Tensor& w, const Tensor* bias, int64_t n,
                                                 int64_t k, int64_t mmla_segment_len, bool wide, int64_t c0,
                                                 int64_t c1) {
  struct Entry {
    size_t hash = 0;
    std::shared_ptr<const PackedQGemmWeights> packed;
  };
  static std::mutex* mu = new std::mutex();
  static auto* cache = new std::map<std::tuple<const void*, const void*, int64_t, bool, int64_t, int64_t>, Entry>();
  const size_t hash = PackingHash(node, w, bias, n, k, mmla_segment_len, wide);
  std::lock_guard<std::mutex> lock(*mu);
  Entry& slot = (*cache)[{w.raw_data(), bias ? bias->raw_data() : nullptr, mmla_segment_len, wide, c0, c1}];
  if (slot.packed == nullptr || slot.hash != hash) {
    slot.hash = hash;
    auto slice = [&](const std::vector<int64_t>& v) {
      return v.size() == 1 ? v : std::vector<int64_t>(v.begin() + c0, v.begin() + c1);
    };
    slot.packed = std::make_shared<const PackedQGemmWeights>(PackQGemmWeights(
        w.data<int8_t>() + c0 * k, c1 - c0, k, bias ? bias->data<int32_t>() + c0 : nullptr,
        static_cast<int32_t>(node.GetInt("x_zero_point", 0)), slice(node.GetInts("multiplier")),
        slice(node.GetInts("shift")), mmla_segment_len, wide));
  }
  return slot.packed;
}

QGemmOutputStage OutputStage(const Node& node, bool residual) {
  QGemmOutputStage s;
  s.y_zero_point = static_cast<int32_t>(node.GetInt("y_zero_point", 0));
  s.act_min = static_cast<int32_t>(node.GetInt("act_min", 0));
  s.act_max = static_cast<int32_t>(node.GetInt("act_max", 255));
  if (residual) {
    s.r_zero_point = static_cast<int32_t>(node.GetInt("r_zero_point", 0));
    s.r_scale = RequantizeScale(static_cast<int32_t>(node.GetInts("r_multiplier").at(0)),
                                static_cast<int32_t>(node.GetInts("r_shift").at(0)));
  }
  return s;
}

// An NHWC convolution's geometry, as the indirection buffers need it.
struct IndirectionShape {
  int64_t n, h, w, c, oh, ow, kh, kw;
  const int64_t *stride, *pad, *dilation;
};

// For every output pixel, `taps` row pointers into the input `a`: kh * kw taps, then zero_row up to
// `taps`; padding taps read zero_row too (the input zero point, real 0).
void FillConvIndirection(const IndirectionShape& s, const uint8_t* a, const uint8_t* zero_row, int64_t taps,
                         const uint8_t** p) {
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t i = 0; i < s.oh; ++i) {
      for (int64_t j = 0; j < s.ow; ++j) {
        const uint8_t** pixel = p;
        for (int64_t u = 0; u < s.kh; ++u) {
          const int64_t ih = i * s.stride[0] - s.pad[0] + u * s.dilation[0];
          for (int64_t v = 0; v < s.kw; ++v) {
            const int64_t iw = j * s.stride[1] - s.pad[1] + v * s.dilation[1];
            *p++ = ih < 0 || ih >= s.h || iw < 0 || iw >= s.w ? zero_row : a + ((n * s.h + ih) * s.w + iw) * s.c;
          }
        }
        while (p < pixel + taps) *p++ = zero_row;
      }
    }
  }
}

// memcpy for the short runs of im2col (a few to a few dozen bytes): two overlapping fixed-size copies
// instead of a library call.
inline void CopyShort(uint8_t* dst, const uint8_t* src, int64_t n) {
  if (n >= 16 && n <= 32) {
    std::memcpy(dst, src, 16);
    std::memcpy(dst + n - 16, src + n - 16, 16);
  } else if (n >= 8 && n < 16) {
    std::memcpy(dst, src, 8);
    std::memcpy(dst + n - 8, src + n - 8, 8);
  } else if (n >= 4 && n < 8) {
    std::memcpy(dst, src, 4);
    std::memcpy(dst + n - 4, src + n - 4, 4);
  } else {
    std::memcpy(dst, src, n);
  }
}

const Tensor* In(absl::Span<const Tensor* const> in, int i) { return i < static_cast<int>(in.size()) ? in[i] : nullptr; }

// The costs only rank the family members (the operator-level entries in int8_op_kernels.cc carry the
// estimates selection between backends uses): lower is preferred where a CPU has several.
template <int kRank>
double Rank(const ProblemShape&) {
  return kRank;
}

QGemmKernelEntry Entry(const char* name, Isa isa, const char* backend, double (*rank)(const ProblemShape&),
                       QGemmUkernel ukernel) {
  return MakeKernelEntry(name, "qgemm", "u8xs8", "packed", isa, backend, nullptr, rank, ukernel);
}

KernelRegistry<QGemmUkernel>* BuildQGemmRegistry() {
  auto* r = new KernelRegistry<QGemmUkernel>;
#if defined(__x86_64__)
  r->Register(Entry("tessel_qu8_gemm__avx512vnni", Isa::kAvx512Vnni, "x86", Rank<1>,
                    {QGemmKernel::kAvx512Vnni, QGemmU8S8__avx512vnni, QGemmU8S8Indirect__avx512vnni}));
  r->Register(Entry("tessel_qu8_gemm__avxvnni", Isa::kAvxVnni, "x86", Rank<2>,
                    {QGemmKernel::kAvxVnni, QGemmU8S8__avxvnni, QGemmU8S8Indirect__avxvnni}));
  r->Register(Entry("tessel_qu8_gemm__avx2", Isa::kAvx2, "x86", Rank<3>,
                    {QGemmKernel::kAvx2, QGemmU8S8__avx2, QGemmU8S8Indirect__avx2}));
#endif
#if defined(__aarch64__)
  r->Register(Entry("tessel_qu8_gemm__svei8mm", Isa::kSveI8mm, "sve", Rank<0>,
                    {QGemmKernel::kSveI8mm, QGemmU8S8__svei8mm, QGemmU8S8Indirect__svei8mm}));
  r->Register(Entry("tessel_qu8_gemm__neoni8mm", Isa::kI8mm, "neon", Rank<1>,
                    {QGemmKernel::kNeonI8mm, QGemmU8S8__neoni8mm, QGemmU8S8Indirect__neoni8mm}));
  r->Register(Entry("tessel_qu8_gemm__sve", Isa::kSve, "sve", Rank<2>,
                    {QGemmKernel::kSve, QGemmU8S8__sve, QGemmU8S8Indirect__sve}));
  r->Register(Entry("tessel_qu8_gemm__neondot", Isa::kDotprod, "neon", Rank<3>,
                    {QGemmKernel::kNeonDot, QGemmU8S8__neondot, QGemmU8S8Indirect__neondot}));
#endif
  return r;
}

// The entry of `kernel` (null where this build has none).
const QGemmKernelEntry* EntryOf(QGemmKernel kernel) {
  for (const QGemmKernelEntry& e : QGemmKernels().entries()) {
    if (e.fn.id == kernel) return &e;
  }
  return nullptr;
}

}  // namespace

const KernelRegistry<QGemmUkernel>& QGemmKernels() {
  // Leaked on purpose, like the other kernel registries.
  static const KernelRegistry<QGemmUkernel>* registry = BuildQGemmRegistry();
  return *registry;
}

bool QGemmKernelAvailable(QGemmKernel kernel) {
  const QGemmKernelEntry* e = EntryOf(kernel);
  return e != nullptr && CpuSupports(e->isa);
}

QGemmKernel BestQGemmKernel() {
  // Forcing was honoured by operator selection (backend "int8"); this only picks the family member.
  static const QGemmKernel best = [] {
    absl::StatusOr<const QGemmKernelEntry*> e = QGemmKernels().Select("qgemm", "u8xs8", "packed", {}, "");
    return e.ok() ? (*e)->fn.id : QGemmKernel::kAvx512Vnni;
  }();
  return best;
}

bool Int8NodeSupported(const Node& node, DType input_dtype, int64_t input_rank) {
  if (node.domain() != kTesselDomain || !QGemmKernelAvailable(BestQGemmKernel()) || input_dtype != DType::kU8) {
    return false;
  }
  if (node.op_type() == "QGemm") return input_rank == 2;
  return node.op_type() == "QConv" && node.GetString("layout", "nchw") == "nhwc" && node.GetInt("group", 1) == 1 &&
         input_rank == 4;
}

absl::StatusOr<std::unique_ptr<PreparedInt8Node>> PreparedInt8Node::Create(const Node& node,
                                                                          absl::Span<const Tensor* const> in,
                                                                          const Tensor& y) {
  return Create(node, in, y, BestQGemmKernel());
}

absl::StatusOr<std::unique_ptr<PreparedInt8Node>> PreparedInt8Node::Create(const Node& node,
                                                                          absl::Span<const Tensor* const> in,
                                                                          const Tensor& y, QGemmKernel kernel) {
  if (in.size() < 2 || in[0] == nullptr || in[1] == nullptr || !Int8NodeSupported(node, in[0]->dtype(), in[0]->rank())) {
    return absl::InvalidArgumentError(absl::StrCat(node.DebugName(), ": not served by the int8 GEMM path"));
  }
  if (!QGemmKernelAvailable(kernel)) {
    return absl::FailedPreconditionError(
        absl::StrCat(node.DebugName(), ": this build or CPU lacks the requested int8 GEMM kernel"));
  }
  std::unique_ptr<PreparedInt8Node> p(new PreparedInt8Node);
  p->kernel_ = kernel;
  p->ukernel_ = EntryOf(kernel)->fn;
  const Tensor& x = *in[0];
  const Tensor& wt = *in[1];
  p->x_zero_point_ = static_cast<uint8_t>(node.GetInt("x_zero_point", 0));
  p->stage_ = OutputStage(node, In(in, 3) != nullptr);
  int64_t k = 0;
  if (node.op_type() == "QGemm") {
    p->rows_ = x.dim(0);
    k = x.dim(1);
    p->n_ = wt.dim(0);
  } else {
    // Channels-last: x [N, H, W, C], w [M, KH, KW, C], y [N, OH, OW, M].
    p->conv_ = true;
    p->batch_ = x.dim(0), p->h_ = x.dim(1), p->w_ = x.dim(2), p->c_ = x.dim(3);
    p->n_ = wt.dim(0), p->kh_ = wt.dim(1), p->kw_ = wt.dim(2);
    p->oh_ = y.dim(1), p->ow_ = y.dim(2);
    absl::StatusOr<ConvParams> cp =
        ResolveConvParams(node, DimsOf({p->batch_, p->c_, p->h_, p->w_}), DimsOf({p->n_, p->c_, p->kh_, p->kw_}));
    if (!cp.ok()) return cp.status();
    for (int i = 0; i < 2; ++i) {
      p->stride_[i] = cp->strides[i];
      p->pad_[i] = cp->pads_begin[i];
      p->dilation_[i] = cp->dilations[i];
    }
    p->rows_ = p->batch_ * p->oh_ * p->ow_;
    k = p->kh_ * p->kw_ * p->c_;
  }
  const int64_t kp = (k + 3) / 4 * 4;  // PackQGemmWeights' padding
  p->direct_ = k == kp && (!p->conv_ || (p->kh_ == 1 && p->kw_ == 1 && p->stride_[0] == 1 && p->stride_[1] == 1 &&
                                          p->pad_[0] == 0 && p->pad_[1] == 0));
  p->indirect_ = !p->direct_ && p->conv_ && p->c_ % 4 == 0;
  // The i8mm layout pads each row run (a tap's C channels, or the whole row) to a multiple of 8.
  const bool mmla = kernel == QGemmKernel::kNeonI8mm || kernel == QGemmKernel::kSveI8mm;
  const int64_t mmla_segment_len = !mmla ? 0 : p->indirect_ ? p->c_ : kp;
  p->kp_ = kp;
  const bool wide = kernel == QGemmKernel::kAvx2;
  if (!p->conv_ && p->rows_ < kColumnSplitRows && p->n_ >= 2 * kQGemmNr) {
    // Up to 4 parts of whole 64-column blocks.
    const int64_t blocks = (p->n_ + kQGemmNr - 1) / kQGemmNr, parts = std::min<int64_t>(4, p->n_ / kQGemmNr);
    for (int64_t i = 0; i < parts; ++i) {
      const int64_t c0 = i * blocks / parts * kQGemmNr;
      const int64_t c1 = std::min(p->n_, (i + 1) * blocks / parts * kQGemmNr);
      p->parts_.push_back(Packed(node, wt, In(in, 2), p->n_, k, mmla_segment_len, wide, c0, c1));
      p->part_begin_.push_back(c0);
    }
  } else {
    p->weights_ = Packed(node, wt, In(in, 2), p->n_, k, mmla_segment_len, wide, 0, p->n_);
  }
  if (p->indirect_) {
    p->indirection_.assign(p->rows_ * p->kh_ * p->kw_, nullptr);
    p->zero_row_.assign(p->c_, p->x_zero_point_);
    // With the input already bound (an arena view), the pointers are made now, at load, not in the
    // first inference.
    if (in[0]->buffer() != nullptr) p->FillIndirection(in[0]->data<uint8_t>());
  } else if (!p->direct_) {
    // The K padding reads as 0, which meets zero weights.
    p->scratch_.assign(p->rows_ * kp, 0);
  }
  return p;
}

void PreparedInt8Node::Run(absl::Span<const Tensor* const> in, Tensor& y) {
  const Operands op = Begin(in);
  GemmRows(op, 0, rows_, y.data<uint8_t>());
}

void PreparedInt8Node::FillIndirection(const uint8_t* a) {
  FillConvIndirection({batch_, h_, w_, c_, oh_, ow_, kh_, kw_, stride_, pad_, dilation_}, a, zero_row_.data(), kh_ * kw_,
                      indirection_.data());
  indirection_base_ = a;
}

PreparedInt8Node::Operands PreparedInt8Node::Begin(absl::Span<const Tensor* const> in) {
  const uint8_t* a = in[0]->data<uint8_t>();
  const int64_t kp = kp_;
  QGemmOutputStage stage = stage_;
  if (const Tensor* r = In(in, 3)) stage.residual = r->data<uint8_t>();
  if (indirect_) {
    if (a != indirection_base_) FillIndirection(a);
    return {nullptr, stage};
  }
  if (!direct_ && !conv_) {
    const int64_t k = in[0]->dim(1);
    for (int64_t r = 0; r < rows_; ++r) std::memcpy(scratch_.data() + r * kp, a + r * k, k);
    a = scratch_.data();
  } else if (!direct_) {
    return {scratch_.data(), stage, a};  // GemmRows writes the im2col rows it needs
  }
  return {a, stage};
}

void PreparedInt8Node::Im2colRows(const uint8_t* a, int64_t begin, int64_t end) const {
  // Padding reads as the zero point (real 0). The geometry in locals: the u8 stores may alias this
  // object's fields, which would make every copy reload them.
  const int64_t h = h_, w = w_, c = c_, oh = oh_, ow = ow_, kh = kh_, kw = kw_, kp = kp_;
  const int64_t sh = stride_[0], sw = stride_[1], ph = pad_[0], pw = pad_[1], dh = dilation_[0], dw = dilation_[1];
  const uint8_t zp = x_zero_point_;
  uint8_t* rows = scratch_.data();
  // Row r is output pixel (n, i, j): divided once, then stepped.
  int64_t n = begin / (oh * ow), i = begin / ow % oh, j = begin % ow;
  for (int64_t r = begin; r < end; ++r, ++j) {
    if (j == ow) {
      j = 0;
      if (++i == oh) i = 0, ++n;
    }
    uint8_t* row = rows + r * kp;
    const int64_t iw0 = j * sw - pw;
    const bool row_inside = dw == 1 && iw0 >= 0 && iw0 + kw <= w;
    for (int64_t u = 0; u < kh; ++u) {
      const int64_t ih = i * sh - ph + u * dh;
      uint8_t* taps = row + u * kw * c;
      if (ih < 0 || ih >= h) {
        std::memset(taps, zp, kw * c);
        continue;
      }
      const uint8_t* src = a + ((n * h + ih) * w) * c;
      if (row_inside) {
        // The kernel row's taps are adjacent pixels: one copy (small C, e.g. a 7x7 RGB stem).
        CopyShort(taps, src + iw0 * c, kw * c);
        continue;
      }
      for (int64_t v = 0; v < kw; ++v) {
        const int64_t iw = iw0 + v * dw;
        uint8_t* dst = taps + v * c;
        if (iw < 0 || iw >= w) {
          std::memset(dst, zp, c);
        } else {
          CopyShort(dst, src + iw * c, c);
        }
      }
    }
  }
}

void PreparedInt8Node::Gemm(const Operands& op, const PackedQGemmWeights& w, int64_t col, int64_t begin,
                            int64_t end, uint8_t* y_base) const {
  if (begin >= end) return;
  const int64_t rows = end - begin;
  const uint8_t* a = op.a != nullptr ? op.a + begin * kp_ : nullptr;
  const uint8_t* const* indirection = indirection_.data() + begin * kh_ * kw_;
  QGemmOutputStage stage = op.stage;
  if (stage.residual != nullptr) stage.residual += begin * n_ + col;
  uint8_t* y = y_base + begin * n_ + col;
  if (indirect_) {
    ukernel_.indirect(indirection, kh_ * kw_, c_, rows, w, stage, y, n_);
  } else {
    ukernel_.plain(a, rows, w, stage, y, n_);
  }
}

void PreparedInt8Node::GemmRows(const Operands& op, int64_t begin, int64_t end, uint8_t* y) const {
  if (op.im2col_x != nullptr) Im2colRows(op.im2col_x, begin, end);
  if (weights_ != nullptr) return Gemm(op, *weights_, 0, begin, end, y);
  for (int part = 0; part < column_parts(); ++part) Gemm(op, *parts_[part], part_begin_[part], begin, end, y);
}

void PreparedInt8Node::GemmColumns(const Operands& op, int part, uint8_t* y) const {
  Gemm(op, *parts_[part], part_begin_[part], 0, rows_, y);
}

bool QDwConvKernelAvailable(QDwConvKernel kernel) {
  switch (kernel) {
    case QDwConvKernel::kAvx512Vnni: return HasQGemmVnni();
    case QDwConvKernel::kAvx2: return HasQGemmAvx2();
    case QDwConvKernel::kNeon:
#if defined(__aarch64__)
      return true;
#else
      return false;
#endif
    case QDwConvKernel::kSveI8mm: return HasQGemmSveI8mm();
  }
  return false;
}

QDwConvKernel BestQDwConvKernel() {
#if defined(__aarch64__)
  return HasQGemmSveI8mm() ? QDwConvKernel::kSveI8mm : QDwConvKernel::kNeon;
#else
  return HasQGemmVnni() ? QDwConvKernel::kAvx512Vnni : QDwConvKernel::kAvx2;
#endif
}

bool HasQDwConvKernel() { return QDwConvKernelAvailable(BestQDwConvKernel()); }

bool Int8DepthwiseSupported(const Node& node, DType input_dtype, int64_t input_rank, int64_t channels,
                            int64_t filters, int64_t filter_channels, bool residual) {
  if (node.domain() != kTesselDomain || node.op_type() != "QConv" || !HasQDwConvKernel() || input_dtype != DType::kU8 ||
      input_rank != 4 || node.GetString("layout", "nchw") != "nhwc" || residual) {
    return false;
  }
  const int64_t group = node.GetInt("group", 1);
  const int64_t x_zp = node.GetInt("x_zero_point", 0);
  const int64_t lo = node.GetInt("act_min", 0), hi = node.GetInt("act_max", 255);
  return group > 1 && group == channels && filters == channels && filter_channels == 1 && x_zp >= 0 && x_zp <= 255 &&
         lo >= 0 && hi <= 255 && lo <= hi;
}

absl::StatusOr<std::unique_ptr<PreparedQDwConv>> PreparedQDwConv::Create(const Node& node,
                                                                        absl::Span<const Tensor* const> in,
                                                                        const Tensor& y) {
  return Create(node, in, y, BestQDwConvKernel());
}

absl::StatusOr<std::unique_ptr<PreparedQDwConv>> PreparedQDwConv::Create(const Node& node,
                                                                        absl::Span<const Tensor* const> in,
                                                                        const Tensor& y, QDwConvKernel kernel) {
  if (in.size() < 2 || in[0] == nullptr || in[1] == nullptr || in[0]->rank() != 4 || in[1]->rank() != 4 ||
      !Int8DepthwiseSupported(node, in[0]->dtype(), in[0]->rank(), in[0]->dim(3), in[1]->dim(0), in[1]->dim(3),
                              In(in, 3) != nullptr)) {
    return absl::InvalidArgumentError(absl::StrCat(node.DebugName(), ": not served by the int8 depthwise kernel"));
  }
  if (!QDwConvKernelAvailable(kernel)) {
    return absl::FailedPreconditionError(
        absl::StrCat(node.DebugName(), ": this build or CPU lacks the requested int8 depthwise kernel"));
  }
  std::unique_ptr<PreparedQDwConv> p(new PreparedQDwConv);
  p->kernel_ = kernel;
  const Tensor& x = *in[0];
  const Tensor& wt = *in[1];
  // Channels-last: x [N, H, W, C], w [C, KH, KW, 1], y [N, OH, OW, C].
  p->batch_ = x.dim(0), p->h_ = x.dim(1), p->w_ = x.dim(2), p->c_ = x.dim(3);
  p->kh_ = wt.dim(1), p->kw_ = wt.dim(2);
  p->oh_ = y.dim(1), p->ow_ = y.dim(2);
  absl::StatusOr<ConvParams> cp =
      ResolveConvParams(node, DimsOf({p->batch_, p->c_, p->h_, p->w_}), DimsOf({p->c_, 1, p->kh_, p->kw_}));
  if (!cp.ok()) return cp.status();
  for (int i = 0; i < 2; ++i) {
    p->stride_[i] = cp->strides[i];
    p->pad_[i] = cp->pads_begin[i];
    p->dilation_[i] = cp->dilations[i];
  }
  const std::vector<int64_t>& mult = node.GetInts("multiplier");
  const std::vector<int64_t>& shift = node.GetInts("shift");
  if (mult.empty() || mult.size() != shift.size() || (mult.size() != 1 && static_cast<int64_t>(mult.size()) != p->c_)) {
    return absl::InvalidArgumentError(absl::StrCat(node.DebugName(), ": multiplier / shift need 1 or C entries"));
  }
  const uint8_t x_zp = static_cast<uint8_t>(node.GetInt("x_zero_point", 0));
  const Tensor* b = In(in, 2);
  const int32_t* bias = b ? b->data<int32_t>() : nullptr;
  switch (kernel) {
    case QDwConvKernel::kNeon:
      p->neon_weights_ = PackQDwConvNeonWeights(wt.data<int8_t>(), p->c_, p->kh_ * p->kw_, bias, x_zp, mult, shift);
      p->taps_ = p->kh_ * p->kw_;
      break;
    case QDwConvKernel::kAvx512Vnni:
      p->weights_ = PackQDwConvWeights(wt.data<int8_t>(), p->c_, p->kh_ * p->kw_, bias, x_zp, mult, shift);
      p->taps_ = p->weights_.quads * 4;
      break;
    case QDwConvKernel::kAvx2:
      p->avx2_weights_ = PackQDwConvAvx2Weights(wt.data<int8_t>(), p->c_, p->kh_ * p->kw_, bias, x_zp, mult, shift);
      p->taps_ = p->avx2_weights_.pairs * 2;
      break;
    case QDwConvKernel::kSveI8mm:
      p->sve_weights_ = PackQDwConvSveWeights(wt.data<int8_t>(), p->c_, p->kh_ * p->kw_, bias, x_zp, mult, shift);
      p->taps_ = p->sve_weights_.quads * 4;
      break;
  }
  p->y_zero_point_ = static_cast<int32_t>(node.GetInt("y_zero_point", 0));
  p->act_min_ = static_cast<int32_t>(node.GetInt("act_min", 0));
  p->act_max_ = static_cast<int32_t>(node.GetInt("act_max", 255));
  p->indirection_.assign(p->batch_ * p->oh_ * p->ow_ * p->taps_, nullptr);
  p->zero_row_.assign(p->c_, x_zp);
  // With the input already bound (an arena view), the pointers are made now, at load, not in the
  // first inference.
  if (x.buffer() != nullptr) p->FillIndirection(x.data<uint8_t>());
  return p;
}

void PreparedQDwConv::FillIndirection(const uint8_t* a) {
  FillConvIndirection({batch_, h_, w_, c_, oh_, ow_, kh_, kw_, stride_, pad_, dilation_}, a, zero_row_.data(), taps_,
                      indirection_.data());
  indirection_base_ = a;
}

void PreparedQDwConv::Begin(absl::Span<const Tensor* const> in) {
  const uint8_t* a = in[0]->data<uint8_t>();
  if (a != indirection_base_) FillIndirection(a);
}

void PreparedQDwConv::Pixels(int64_t begin, int64_t end, uint8_t* y_base) const {
  if (begin >= end) return;
  const int64_t pixels = end - begin;
  const uint8_t* const* ind = indirection_.data() + begin * taps_;
  uint8_t* y = y_base + begin * c_;
  // Only the kernels this build has are reachable (Create checked QDwConvKernelAvailable).
  switch (kernel_) {
#if defined(__x86_64__)
    case QDwConvKernel::kAvx512Vnni:
      QDwConvU8S8__avx512vnni(ind, pixels, weights_, y_zero_point_, act_min_, act_max_, y);
      break;
    case QDwConvKernel::kAvx2:
      QDwConvU8S8__avx2(ind, pixels, avx2_weights_, y_zero_point_, act_min_, act_max_, y);
      break;
#endif
#if defined(__aarch64__)
    case QDwConvKernel::kNeon:
      QDwConvU8S8__neon(ind, pixels, neon_weights_, y_zero_point_, act_min_, act_max_, y);
      break;
    case QDwConvKernel::kSveI8mm:
      QDwConvU8S8__svei8mm(ind, pixels, sve_weights_, y_zero_point_, act_min_, act_max_, y);
      break;
#endif
    default:
      (void)ind;
      (void)y;
      (void)pixels;
      break;
  }
}

void PreparedQDwConv::Run(absl::Span<const Tensor* const> in, Tensor& y) {
  Begin(in);
  Pixels(0, pixels(), y.data<uint8_t>());
}

absl::StatusOr<bool> RunInt8Node(const Node& node, absl::Span<const Tensor* const> inputs, absl::Span<Tensor> outputs) {
  if (!inputs.empty() && inputs[0] != nullptr && inputs.size() >= 2 && inputs[1] != nullptr &&
      inputs[0]->rank() == 4 && inputs[1]->rank() == 4 &&
      Int8DepthwiseSupported(node, inputs[0]->dtype(), inputs[0]->rank(), inputs[0]->dim(3), inputs[1]->dim(0),
                             inputs[1]->dim(3), In(inputs, 3) != nullptr)) {
    absl::StatusOr<std::unique_ptr<PreparedQDwConv>> p = PreparedQDwConv::Create(node, inputs, outputs[0]);
    if (!p.ok()) return p.status();
    (*p)->Run(inputs, outputs[0]);
    return true;
  }
  if (inputs.empty() || inputs[0] == nullptr || !Int8NodeSupported(node, inputs[0]->dtype(), inputs[0]->rank())) {
    return false;
  }
  absl::StatusOr<std::unique_ptr<PreparedInt8Node>> p = PreparedInt8Node::Create(node, inputs, outputs[0]);
  if (!p.ok()) return p.status();
  (*p)->Run(inputs, outputs[0]);
  return true;
}

}  // namespace tessel
