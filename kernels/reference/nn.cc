// Reference kernels for the neural-network operators: plain f32 loops with double accumulation. The
// innermost loops run over contiguous memory so that whole CNNs (ResNet-18 at 224x224) take seconds.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/ops/nn_params.h"
#include "graph/ops/shape_util.h"
#include "kernels/reference/reference.h"
#include "kernels/reference/resize_coords.h"

namespace tessel {
namespace {

using Inputs = absl::Span<const Tensor* const>;

const Tensor* In(Inputs inputs, int i) { return i < static_cast<int>(inputs.size()) ? inputs[i] : nullptr; }

absl::Status RequireF32(const Node& node, Inputs inputs, std::initializer_list<int> which) {
  for (int i : which) {
    const Tensor* t = In(inputs, i);
    if (t == nullptr || t->dtype() == DType::kF32) continue;
    const Value* v = node.input(i);
    return absl::UnimplementedError(absl::StrCat("the reference ", node.op_type(), " kernel supports f32 only; input ",
                                                 i, v ? absl::StrCat(" '", v->name(), "'") : "", " is ",
                                                 DTypeName(t->dtype())));
  }
  return absl::OkStatus();
}


int64_t Product(const std::vector<int64_t>& v, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t i = from; i < to; ++i) n *= v[i];
  return n;
}

// Window geometry with the spatial dimensions padded to three (leading extent-1 dimensions), so that
// 1-D, 2-D and 3-D windows share one loop nest.
struct Window3 {
  int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];

  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
};

// The extents a convolution (or its transpose) loops over: x [N, C, ...], y [N, M, ...], `group`
// groups, window geometry g.
struct ConvShape {
  int64_t n_batch, c_in, m_out, cg, mg, in_plane, out_plane, k_vol;
};

ConvShape ConvShapeOf(const Tensor& x, const Tensor& y, int64_t group, const Window3& g) {
  const int64_t c_in = x.dim(1), m_out = y.dim(1);
  return {x.dim(0), c_in, m_out, c_in / group, m_out / group, g.in_size(), g.out_size(), g.k[0] * g.k[1] * g.k[2]};
}

absl::StatusOr<Window3> ToWindow3(const Node& node, const WindowParams& p, const Tensor& x, const Tensor& y) {
  const int ns = p.num_spatial();
  if (ns > 3) {
    return absl::UnimplementedError(
        absl::StrCat("the reference ", node.op_type(), " kernel supports 1 to 3 spatial dimensions, got ", ns));
  }
  Window3 w;
  const int lead = 3 - ns;
  for (int j = 0; j < 3; ++j) {
    const int i = j - lead;
    const bool real = i >= 0;
    w.in[j] = real ? x.dim(2 + i) : 1;
    w.out[j] = real ? y.dim(2 + i) : 1;
    w.k[j] = real ? p.kernel[i] : 1;
    w.s[j] = real ? p.strides[i] : 1;
    w.d[j] = real ? p.dilations[i] : 1;
    w.pb[j] = real ? p.pads_begin[i] : 0;
    w.pe[j] = real ? p.pads_end[i] : 0;
  }
  return w;
}

// y[i] = b + sum over r of w[r] * row[r][i] for the kBlock outputs at i0, summed in double in the order
// of r, the accumulators in registers while the rows stream past.
template <int kBlock>
void AccumulateBlock(const float* w, const float* const* row, int64_t rows, int64_t i0, double b, float* y) {
  double a[kBlock];
  for (int j = 0; j < kBlock; ++j) a[j] = b;
  for (int64_t r = 0; r < rows; ++r) {
    const double wv = w[r];
    const float* x = row[r] + i0;
    for (int j = 0; j < kBlock; ++j) a[j] += wv * x[j];
  }
  for (int j = 0; j < kBlock; ++j) y[i0 + j] = static_cast<float>(a[j]);
}

// AccumulateBlock over all n outputs: blocks of 8, then 4, 2 and 1 for the rest.
void AccumulateRows(const float* w, const float* const* row, int64_t rows, int64_t n, double b, float* y) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) AccumulateBlock<8>(w, row, rows, i, b, y);
  if (i + 4 <= n) AccumulateBlock<4>(w, row, rows, i, b, y), i += 4;
  if (i + 2 <= n) AccumulateBlock<2>(w, row, rows, i, b, y), i += 2;
  if (i < n) AccumulateBlock<1>(w, row, rows, i, b, y);
}

absl::Status ConvKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  absl::Status s = RequireF32(node, inputs, {0, 1, 2});
  if (!s.ok()) return s;
  const Tensor& x = *inputs[0];
  const Tensor& w = *inputs[1];
  const Tensor* bias = In(inputs, 2);
  Tensor& y = outputs[0];
  absl::StatusOr<ConvParams> p = ResolveConvParams(node, DimsOf(x.shape()), DimsOf(w.shape()));
  if (!p.ok()) return p.status();
  absl::StatusOr<Window3> g = ToWindow3(node, *p, x, y);
  if (!g.ok()) return g.status();
  const auto [n_batch, c_in, m_out, cg, mg, in_plane, out_plane, k_vol] = ConvShapeOf(x, y, p->group, *g);
  const int64_t rows = cg * k_vol;  // one per (input channel of the group, kernel tap), weight order
  const float* xd = x.data<float>();
  const float* wd = w.data<float>();
  float* yd = y.data<float>();
  // A 1x1 kernel at stride 1 without padding reads every input plane as it is; any other window is
  // unfolded once per (image, group) into `col` (zeros where the window reads padding), so that the
  // accumulation below runs over whole output planes, the same sums in the same order.
  const bool direct = k_vol == 1 && g->s[0] == 1 && g->s[1] == 1 && g->s[2] == 1 && g->pb[0] == 0 &&
                      g->pb[1] == 0 && g->pb[2] == 0 && out_plane == in_plane;
  std::vector<float> col(direct ? 0 : rows * out_plane);
  std::vector<const float*> row_of(rows);
  for (int64_t n = 0; n < n_batch; ++n) {
    for (int64_t grp = 0; grp < p->group; ++grp) {
      const float* xg = xd + (n * c_in + grp * cg) * in_plane;
      for (int64_t icg = 0; icg < cg; ++icg) {
        const float* xp = xg + icg * in_plane;
        if (direct) {
          row_of[icg] = xp;
          continue;
        }
        for (int64_t k0 = 0; k0 < g->k[0]; ++k0) {
          for (int64_t k1 = 0; k1 < g->k[1]; ++k1) {
            for (int64_t k2 = 0; k2 < g->k[2]; ++k2) {
              const int64_t r = icg * k_vol + (k0 * g->k[1] + k1) * g->k[2] + k2;
              float* cr = col.data() + r * out_plane;
              row_of[r] = cr;
              for (int64_t o0 = 0; o0 < g->out[0]; ++o0) {
                const int64_t i0 = o0 * g->s[0] - g->pb[0] + k0 * g->d[0];
                for (int64_t o1 = 0; o1 < g->out[1]; ++o1) {
                  const int64_t i1 = o1 * g->s[1] - g->pb[1] + k1 * g->d[1];
                  float* dst = cr + (o0 * g->out[1] + o1) * g->out[2];
                  const bool inside = i0 >= 0 && i0 < g->in[0] && i1 >= 0 && i1 < g->in[1];
                  for (int64_t o2 = 0; o2 < g->out[2]; ++o2) {
                    const int64_t i2 = o2 * g->s[2] - g->pb[2] + k2 * g->d[2];
                    dst[o2] = inside && i2 >= 0 && i2 < g->in[2] ? xp[(i0 * g->in[1] + i1) * g->in[2] + i2] : 0.0f;
                  }
                }
              }
            }
          }
        }
      }
      for (int64_t oc = grp * mg; oc < (grp + 1) * mg; ++oc) {
        const double b0 = bias ? static_cast<double>(bias->data<float>()[oc]) : 0.0;
        AccumulateRows(wd + oc * rows, row_of.data(), rows, out_plane, b0, yd + (n * m_out + oc) * out_plane);
      }
    }
  }
  return absl::OkStatus();
}

// Per spatial dimension and output index: the input positions a pooling window reads and how many
// window positions fall inside the padded extent (the count_include_pad divisor).
struct PoolTaps {
  std::vector<std::vector<int64_t>> positions;
  std::vector<int64_t> padded_count;
};

PoolTaps ComputeTaps(int64_t in, int64_t out, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe) {
  PoolTaps t;
  t.positions.resize(out);
  t.padded_count.resize(out);
  for (int64_t o = 0; o < out; ++o) {
    int64_t padded = 0;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t pos = o * s - pb + j * d;
      if (pos >= -pb && pos < in + pe) ++padded;
      if (pos >= 0 && pos < in) t.positions[o].push_back(pos);
    }
    t.padded_count[o] = padded;
  }
  return t;
}

absl::Status PoolKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs);

// MaxPool on u8 / i8 (opset 12): the f32 kernel on the values widened, which it returns exactly (a maximum
// is one of its inputs; a window entirely in padding, which ONNX leaves undefined, gives the type's lowest).
absl::Status PoolKernel8(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  const Tensor& x = *inputs[0];
  Tensor wide(DType::kF32, x.shape());
  for (int64_t i = 0; i < x.num_elements(); ++i) wide.data<float>()[i] = static_cast<float>(x.GetAsInt64(i));
  std::vector<Tensor> wide_out;
  wide_out.emplace_back(DType::kF32, outputs[0].shape());
  for (size_t i = 1; i < outputs.size(); ++i) wide_out.push_back(outputs[i]);  // Indices: shares the buffer
  const Tensor* in[] = {&wide};
  absl::Status s = PoolKernel(node, in, absl::MakeSpan(wide_out));
  if (!s.ok()) return s;
  const bool u8 = x.dtype() == DType::kU8;
  for (int64_t i = 0; i < outputs[0].num_elements(); ++i) {
    const float v = std::max(wide_out[0].data<float>()[i], u8 ? 0.0f : -128.0f);
    if (u8) {
      outputs[0].data<uint8_t>()[i] = static_cast<uint8_t>(v);
    } else {
      outputs[0].data<int8_t>()[i] = static_cast<int8_t>(v);
    }
  }
  return absl::OkStatus();
}

absl::Status PoolKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  const DType xt = inputs[0]->dtype();
  if (node.op_type() == "MaxPool" && (xt == DType::kU8 || xt == DType::kI8)) return PoolKernel8(node, inputs, outputs);
  absl::Status s = RequireF32(node, inputs, {0});
  if (!s.ok()) return s;
  const Tensor& x = *inputs[0];
  Tensor& y = outputs[0];
  absl::StatusOr<PoolParams> p = ResolvePoolParams(node, DimsOf(x.shape()));
  if (!p.ok()) return p.status();
  absl::StatusOr<Window3> g = ToWindow3(node, *p, x, y);
  if (!g.ok()) return g.status();
  const bool is_max = node.op_type() == "MaxPool";
  // MaxPool's Indices output: the maximum's flat index into X, row-major or (storage_order 1) with the
  // spatial axes column-major.
  int64_t* indices = is_max && outputs.size() > 1 ? outputs[1].data<int64_t>() : nullptr;
  const bool column_major = node.GetInt("storage_order", 0) == 1;
  const int spatial = x.rank() - 2;
  PoolTaps taps[3];
  for (int j = 0; j < 3; ++j) taps[j] = ComputeTaps(g->in[j], g->out[j], g->k[j], g->s[j], g->d[j], g->pb[j], g->pe[j]);
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t in_plane = g->in_size();
  const int64_t out_plane = g->out_size();
  for (int64_t pl = 0; pl < planes; ++pl) {
    const float* xp = x.data<float>() + pl * in_plane;
    float* yp = y.data<float>() + pl * out_plane;
    for (int64_t o0 = 0; o0 < g->out[0]; ++o0) {
      for (int64_t o1 = 0; o1 < g->out[1]; ++o1) {
        for (int64_t o2 = 0; o2 < g->out[2]; ++o2) {
          const std::vector<int64_t>& t0 = taps[0].positions[o0];
          const std::vector<int64_t>& t1 = taps[1].positions[o1];
          const std::vector<int64_t>& t2 = taps[2].positions[o2];
          float result;
          if (is_max) {
            // A window entirely in padding yields the lowest float, as ONNX Runtime does.
            float m = std::numeric_limits<float>::lowest();
            int64_t at[3] = {0, 0, 0};
            for (int64_t i0 : t0) {
              for (int64_t i1 : t1) {
                const float* row = xp + (i0 * g->in[1] + i1) * g->in[2];
                for (int64_t i2 : t2) {
                  const float v = row[i2];
                  if (v > m || (std::isnan(v) && !std::isnan(m))) {
                    m = v;
                    at[0] = i0, at[1] = i1, at[2] = i2;
                  }
                }
              }
            }
            result = m;
            if (indices != nullptr) {
              // Window3 puts a 2-D pooling's axes in positions 1 and 2 (position 0 has extent 1).
              const int64_t flat = column_major
                                       ? (spatial == 3 ? at[0] + at[1] * g->in[0] + at[2] * g->in[0] * g->in[1]
                                                       : at[1] + at[2] * g->in[1])
                                       : (at[0] * g->in[1] + at[1]) * g->in[2] + at[2];
              indices[pl * out_plane + (o0 * g->out[1] + o1) * g->out[2] + o2] = pl * in_plane + flat;
            }
          } else {
            double sum = 0;
            for (int64_t i0 : t0) {
              for (int64_t i1 : t1) {
                const float* row = xp + (i0 * g->in[1] + i1) * g->in[2];
                for (int64_t i2 : t2) sum += row[i2];
              }
            }
            const int64_t count = p->count_include_pad
                                      ? taps[0].padded_count[o0] * taps[1].padded_count[o1] * taps[2].padded_count[o2]
                                      : static_cast<int64_t>(t0.size() * t1.size() * t2.size());
            result = count == 0 ? 0.0f : static_cast<float>(sum / count);
          }
          yp[(o0 * g->out[1] + o1) * g->out[2] + o2] = result;
        }
      }
    }
  }
  return absl::OkStatus();
}

// GlobalAveragePool and GlobalMaxPool: one value per (n, c) plane (NaN for an empty plane; a NaN in
// the plane wins the maximum, as numpy's max).
// Det: Gaussian elimination with partial pivoting in double, per matrix.
absl::Status DetKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  absl::Status s = RequireF32(node, inputs, {0});
  if (!s.ok()) return s;
  const Tensor& x = *inputs[0];
  const int64_t m = x.dim(x.rank() - 1);
  const int64_t count = outputs[0].num_elements();
  std::vector<double> a(static_cast<size_t>(m * m));
  for (int64_t b = 0; b < count; ++b) {
    const float* src = x.data<float>() + b * m * m;
    for (int64_t i = 0; i < m * m; ++i) a[i] = src[i];
    double det = 1;
    for (int64_t c = 0; c < m && det != 0; ++c) {
      int64_t pivot = c;
      for (int64_t r = c + 1; r < m; ++r) {
        if (std::abs(a[r * m + c]) > std::abs(a[pivot * m + c])) pivot = r;
      }
      if (a[pivot * m + c] == 0) {
        det = 0;
        break;
      }
      if (pivot != c) {
        for (int64_t k = 0; k < m; ++k) std::swap(a[c * m + k], a[pivot * m + k]);
        det = -det;
      }
      det *= a[c * m + c];
      for (int64_t r = c + 1; r < m; ++r) {
        const double f = a[r * m + c] / a[c * m + c];
        for (int64_t k = c; k < m; ++k) a[r * m + k] -= f * a[c * m + k];
      }
    }
    outputs[0].data<float>()[b] = static_cast<float>(det);
  }
  return absl::OkStatus();
}

// MaxUnpool: zeros, then each X element at its index's coordinates (a later duplicate overwrites).
absl::Status MaxUnpoolKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  absl::Status s = RequireF32(node, inputs, {0});
  if (!s.ok()) return s;
  const Tensor& x = *inputs[0];
  const Tensor& indices = *inputs[1];
  Tensor& y = outputs[0];
  if (indices.shape() != x.shape()) {
    return absl::InvalidArgumentError(absl::StrCat("MaxUnpool: I ", ShapeToString(indices.shape()),
                                                   " must have X's shape ", ShapeToString(x.shape())));
  }
  // The indices address the pooled tensor's original extents, (in - 1) x stride + kernel - pads; an
  // output_shape places those coordinates in a tensor of other extents (ONNX's definition).
  const int rank = x.rank(), ns = rank - 2;
  std::vector<int64_t> original = {x.dim(0), x.dim(1)};
  {
    const std::vector<int64_t> kernel = node.GetInts("kernel_shape");
    std::vector<int64_t> strides = node.GetInts("strides"), pads = node.GetInts("pads");
    if (strides.empty()) strides.assign(ns, 1);
    if (pads.empty()) pads.assign(2 * ns, 0);
    for (int d = 0; d < ns; ++d) original.push_back((x.dim(2 + d) - 1) * strides[d] + kernel[d] - pads[d] - pads[ns + d]);
  }
  const std::vector<int64_t> from = RowMajorStrides(original), to = RowMajorStrides(y.shape());
  float* yd = y.data<float>();
  std::fill_n(yd, y.num_elements(), 0.0f);
  const int64_t total = NumElements(original);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    int64_t at = indices.data<int64_t>()[i];
    if (at < 0 || at >= total) {
      return absl::OutOfRangeError(absl::StrCat("MaxUnpool: index ", at, " (element ", i, ") is outside the pooled ",
                                                "input's ", total, " elements"));
    }
    int64_t out = 0;
    for (int d = 0; d < rank; ++d) {
      const int64_t c = at / from[d];
      at %= from[d];
      if (c >= y.dim(d)) {
        return absl::OutOfRangeError(absl::StrCat("MaxUnpool: element ", i, " falls outside output_shape ",
                                                  ShapeToString(y.shape())));
      }
      out += c * to[d];
    }
    yd[out] = x.data<float>()[i];
  }
  return absl::OkStatus();
}

absl::Status GlobalPoolKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  absl::Status s = RequireF32(node, inputs, {0});
  if (!s.ok()) return s;
  const bool max = node.op_type() == "GlobalMaxPool";
  const Tensor& x = *inputs[0];
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t plane = Product(x.shape(), 2, x.shape().size());
  for (int64_t pl = 0; pl < planes; ++pl) {
    const float* xp = x.data<float>() + pl * plane;
    float& y = outputs[0].data<float>()[pl];
    if (plane == 0) {
      y = NAN;
    } else if (max) {
      y = xp[0];
      for (int64_t i = 1; i < plane; ++i) {
        if (xp[i] > y || xp[i] != xp[i]) y = xp[i];
        if (y != y) break;
      }
    } else {
      double sum = 0;
      for (int64_t i = 0; i < plane; ++i) sum += xp[i];
      y = static_cast<float>(sum / plane);
    }
  }
  return absl::OkStatus();
}

// MeanVarianceNormalization as ONNX's function body computes it, in double: over the reduced axes,
// (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9).
absl::Status MvnKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  absl::Status s = RequireF32(node, inputs, {0});
  if (!s.ok()) return s;
  const Tensor& x = *inputs[0];
  const int rank = x.rank();
  std::vector<int64_t> axes = node.HasAttr("axes") ? node.GetInts("axes") : std::vector<int64_t>{0, 2, 3};
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) reduced[a < 0 ? a + rank : a] = true;
  // Each element's group: its index with the reduced axes dropped.
  std::vector<int64_t> group(x.num_elements());
  int64_t groups = 1;
  for (int d = 0; d < rank; ++d) {
    if (!reduced[d]) groups *= x.dim(d);
  }
  std::vector<double> sum(groups, 0.0), sq(groups, 0.0);
  std::vector<int64_t> count(groups, 0);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    int64_t rem = i, g = 0, stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t idx = rem % x.dim(d);
      rem /= x.dim(d);
      if (!reduced[d]) {
        g += idx * stride;
        stride *= x.dim(d);
      }
    }
    group[i] = g;
    const double v = x.data<float>()[i];
    sum[g] += v;
    sq[g] += v * v;
    ++count[g];
  }
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const int64_t g = group[i];
    const double mean = sum[g] / count[g];
    const double sd = std::sqrt(std::max(sq[g] / count[g] - mean * mean, 0.0));
    outputs[0].data<float>()[i] = static_cast<float>((x.data<float>()[i] - mean) / (sd + 1e-9));
  }
  return absl::OkStatus();
}

// LRN across channels: channel c's window is [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] clipped
// to the channels, square sums in double.
absl::Status LrnKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  absl::Status s = RequireF32(node, inputs, {0});
  if (!s.ok()) return s;
  const Tensor& x = *inputs[0];
  const double alpha = node.GetFloat("alpha", 1e-4f), beta = node.GetFloat("beta", 0.75f);
  const double bias = node.GetFloat("bias", 1.0f);
  const int64_t size = node.GetInt("size", 1);
  const int64_t n = x.dim(0), c = x.dim(1), plane = Product(x.shape(), 2, x.shape().size());
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  const float* xd = x.data<float>();
  float* yd = outputs[0].data<float>();
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const int64_t lo = std::max<int64_t>(0, ch - before), hi = std::min<int64_t>(c - 1, ch + after);
      for (int64_t i = 0; i < plane; ++i) {
        double sq = 0;
        for (int64_t k = lo; k <= hi; ++k) {
          const double v = xd[(b * c + k) * plane + i];
          sq += v * v;
        }
        const int64_t at = (b * c + ch) * plane + i;
        yd[at] = static_cast<float>(xd[at] / std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
      }
    }
  }
  return absl::OkStatus();
}

// Each input element scatters x * w into the outputs o = i * stride - pad_begin + k * dilation that land
// inside the (cropped) output.
absl::Status ConvTransposeKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  absl::Status s = RequireF32(node, inputs, {0, 1, 2});
  if (!s.ok()) return s;
  const Tensor& x = *inputs[0];
  const Tensor& w = *inputs[1];
  const Tensor* bias = In(inputs, 2);
  Tensor& y = outputs[0];
  absl::StatusOr<ConvTransposeParams> p = ResolveConvTransposeParams(node, DimsOf(x.shape()), DimsOf(w.shape()));
  if (!p.ok()) return p.status();
  absl::StatusOr<Window3> g = ToWindow3(node, *p, x, y);
  if (!g.ok()) return g.status();
  const auto [n_batch, c_in, m_out, cg, mg, in_plane, out_plane, k_vol] = ConvShapeOf(x, y, p->group, *g);
  const float* xd = x.data<float>();
  const float* wd = w.data<float>();
  float* yd = y.data<float>();
  std::vector<double> acc(out_plane);
  for (int64_t n = 0; n < n_batch; ++n) {
    for (int64_t oc = 0; oc < m_out; ++oc) {
      const int64_t grp = oc / mg, ocg = oc % mg;
      std::fill(acc.begin(), acc.end(), bias ? static_cast<double>(bias->data<float>()[oc]) : 0.0);
      for (int64_t icg = 0; icg < cg; ++icg) {
        const int64_t ic = grp * cg + icg;
        const float* xp = xd + (n * c_in + ic) * in_plane;
        const float* wp = wd + (ic * mg + ocg) * k_vol;
        for (int64_t i0 = 0; i0 < g->in[0]; ++i0) {
          for (int64_t k0 = 0; k0 < g->k[0]; ++k0) {
            const int64_t o0 = i0 * g->s[0] - g->pb[0] + k0 * g->d[0];
            if (o0 < 0 || o0 >= g->out[0]) continue;
            for (int64_t i1 = 0; i1 < g->in[1]; ++i1) {
              for (int64_t k1 = 0; k1 < g->k[1]; ++k1) {
                const int64_t o1 = i1 * g->s[1] - g->pb[1] + k1 * g->d[1];
                if (o1 < 0 || o1 >= g->out[1]) continue;
                const float* xrow = xp + (i0 * g->in[1] + i1) * g->in[2];
                double* arow = acc.data() + (o0 * g->out[1] + o1) * g->out[2];
                for (int64_t k2 = 0; k2 < g->k[2]; ++k2) {
                  const double wv = wp[(k0 * g->k[1] + k1) * g->k[2] + k2];
                  for (int64_t i2 = 0; i2 < g->in[2]; ++i2) {
                    const int64_t o2 = i2 * g->s[2] - g->pb[2] + k2 * g->d[2];
                    if (o2 >= 0 && o2 < g->out[2]) arow[o2] += xrow[i2] * wv;
                  }
                }
              }
            }
          }
        }
      }
      float* yp = yd + (n * m_out + oc) * out_plane;
      for (int64_t i = 0; i < out_plane; ++i) yp[i] = static_cast<float>(acc[i]);
    }
  }
  return absl::OkStatus();
}

absl::Status BatchNormKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  absl::Status s = RequireF32(node, inputs, {0, 1, 2, 3, 4});
  if (!s.ok()) return s;
  const Tensor& x = *inputs[0];
  const double eps = node.GetFloat("epsilon", 1e-5f);
  const int64_t n_batch = x.dim(0);
  const int64_t channels = x.dim(1);
  const int64_t plane = Product(x.shape(), 2, x.shape().size());
  for (int64_t c = 0; c < channels; ++c) {
    const double scale = inputs[1]->data<float>()[c];
    const double shift = inputs[2]->data<float>()[c];
    const double mean = inputs[3]->data<float>()[c];
    const double var = inputs[4]->data<float>()[c];
    const double a = scale / std::sqrt(var + eps);
    const double b = shift - mean * a;
    for (int64_t n = 0; n < n_batch; ++n) {
      const float* xp = x.data<float>() + (n * channels + c) * plane;
      float* yp = outputs[0].data<float>() + (n * channels + c) * plane;
      for (int64_t i = 0; i < plane; ++i) yp[i] = static_cast<float>(xp[i] * a + b);
    }
  }
  return absl::OkStatus();
}

// out[i, :] = sum_k a(i, k) * b[k, :] for row-major b (k x n), accumulated in double (i-k-j order).
void MatMulRows(int64_t m, int64_t k, int64_t n, const float* a, int64_t a_row_stride, int64_t a_col_stride,
                const float* b, std::vector<double>* acc_rows) {
  acc_rows->assign(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i) {
    double* acc = acc_rows->data() + i * n;
    for (int64_t kk = 0; kk < k; ++kk) {
      const double av = a[i * a_row_stride + kk * a_col_stride];
      const float* brow = b + kk * n;
      for (int64_t j = 0; j < n; ++j) acc[j] += av * brow[j];
    }
  }
}

// numpy matmul's m, k and n for A and B of the given shapes (a 1-D A is a row, a 1-D B a column).
void MatMulExtents(const std::vector<int64_t>& as, const std::vector<int64_t>& bs, int64_t* m, int64_t* k,
                   int64_t* n) {
  *m = as.size() == 1 ? 1 : as[as.size() - 2];
  *k = as.back();
  *n = bs.size() == 1 ? 1 : bs.back();
}

// numpy matmul's batch walk over A and B of the given shapes (1-D operands already given their unit
// dimension): fn(batch index, A's element offset, B's) for every output batch, a broadcast batch dimension
// read with stride 0. Sets m, k, n.
template <typename Fn>
void ForEachMatMulBatch(std::vector<int64_t> as, std::vector<int64_t> bs, int64_t* m, int64_t* k, int64_t* n,
                        Fn&& fn) {
  MatMulExtents(as, bs, m, k, n);
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  const size_t abatch = as.size() - 2;
  const size_t bbatch = bs.size() - 2;
  const size_t batch_rank = std::max(abatch, bbatch);
  std::vector<int64_t> batch(batch_rank), astride(batch_rank, 0), bstride(batch_rank, 0);
  int64_t astep = *m * *k;
  int64_t bstep = *k * *n;
  for (size_t r = batch_rank; r-- > 0;) {
    const int64_t ad = r + abatch >= batch_rank ? as[r + abatch - batch_rank] : 1;
    const int64_t bd = r + bbatch >= batch_rank ? bs[r + bbatch - batch_rank] : 1;
    batch[r] = std::max(ad, bd);
    if (ad != 1) astride[r] = astep;
    if (bd != 1) bstride[r] = bstep;
    astep *= ad;
    bstep *= bd;
  }
  const int64_t batches = Product(batch, 0, batch.size());
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t aoff = 0, boff = 0, rem = bi;
    for (size_t r = batch_rank; r-- > 0;) {
      const int64_t idx = rem % batch[r];
      rem /= batch[r];
      aoff += idx * astride[r];
      boff += idx * bstride[r];
    }
    fn(bi, aoff, boff);
  }
}

absl::Status MatMulKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  absl::Status s = RequireF32(node, inputs, {0, 1});
  if (!s.ok()) return s;
  const Tensor& a = *inputs[0];
  const Tensor& b = *inputs[1];
  std::vector<double> acc;
  float* y = outputs[0].data<float>();
  int64_t m, k, n;
  ForEachMatMulBatch(a.shape(), b.shape(), &m, &k, &n, [&](int64_t bi, int64_t aoff, int64_t boff) {
    MatMulRows(m, k, n, a.data<float>() + aoff, k, 1, b.data<float>() + boff, &acc);
    float* yp = y + bi * m * n;
    for (int64_t i = 0; i < m * n; ++i) yp[i] = static_cast<float>(acc[i]);
  });
  return absl::OkStatus();
}

// The requantization of QLinearConv / QLinearMatMul: for output channel (or column) c, the exact integer
// sum `acc` times (x_scale * w_scale[c]) / y_scale (in f32, as ONNX's definition computes the factor) in
// double, rounded half to even, plus y_zero_point, saturated to u8 / i8.
struct QLinearOutput {
  const Tensor* x_scale;
  const Tensor* w_scale;
  const Tensor* y_scale;
  const Tensor* y_zero_point;
  absl::Status Check(const Node& node, int64_t channels) const {
    for (const Tensor* s : {x_scale, w_scale, y_scale}) {
      for (int64_t i = 0; i < s->num_elements(); ++i) {
        const float v = s->data<float>()[i];
        if (!(std::isfinite(v) && v > 0)) {
          return absl::InvalidArgumentError(absl::StrCat(node.DebugName(), ": a scale is ", v, "; expected finite, > 0"));
        }
      }
    }
    if (x_scale->num_elements() != 1 || y_scale->num_elements() != 1 || y_zero_point->num_elements() != 1 ||
        (w_scale->num_elements() != 1 && w_scale->num_elements() != channels)) {
      return absl::InvalidArgumentError(absl::StrCat(node.DebugName(), ": x / y scales and y_zero_point take one value, "
                                                     "w_scale 1 or ", channels));
    }
    return absl::OkStatus();
  }
  void Store(int64_t acc, int64_t c, Tensor& y, int64_t i) const {
    const float wscale = w_scale->data<float>()[w_scale->num_elements() == 1 ? 0 : c];
    const float factor = x_scale->data<float>()[0] * wscale / y_scale->data<float>()[0];
    const double v = std::nearbyint(static_cast<double>(acc) * factor) + static_cast<double>(y_zero_point->GetAsInt64(0));
    const bool u8 = y.dtype() == DType::kU8;
    const double q = std::clamp(v, u8 ? 0.0 : -128.0, u8 ? 255.0 : 127.0);
    if (u8) {
      y.data<uint8_t>()[i] = static_cast<uint8_t>(q);
    } else {
      y.data<int8_t>()[i] = static_cast<int8_t>(q);
    }
  }
};

// A u8 / i8 tensor minus its zero point (one value, or one per index of axis 0 when `per_row`), as f32:
// exact, so that the float reference kernels compute integer sums (exactly while below 2^24 in magnitude,
// where f32 output rounding would start).
Tensor MinusZeroPoint(const Tensor& t, const Tensor* zp) {
  Tensor out(DType::kF32, t.shape());
  const int64_t per = t.rank() > 0 && t.dim(0) > 0 ? t.num_elements() / t.dim(0) : 1;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const int64_t z = zp == nullptr ? 0 : zp->GetAsInt64(zp->num_elements() == 1 ? 0 : i / per);
    out.data<float>()[i] = static_cast<float>(t.GetAsInt64(i) - z);
  }
  return out;
}

// The integer sums of ConvInteger / QLinearConv into `acc` (f32, shaped as the output): the float reference
// convolution on the zero-point-free operands (padding reads the input's zero point, 0 after the
// subtraction); x's zero point one value, w's one or one per output channel.
absl::Status IntegerConv(const Node& node, const Tensor& x, const Tensor* xzp, const Tensor& w, const Tensor* wzp,
                         Tensor* acc) {
  if (xzp != nullptr && xzp->num_elements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(node.DebugName(), ": x_zero_point has ", xzp->num_elements(),
                                                   " entries; expected one"));
  }
  if (wzp != nullptr && wzp->num_elements() != 1 && wzp->num_elements() != w.dim(0)) {
    return absl::InvalidArgumentError(absl::StrCat(node.DebugName(), ": w_zero_point has ", wzp->num_elements(),
                                                   " entries; expected 1 or ", w.dim(0)));
  }
  const Tensor xf = MinusZeroPoint(x, xzp);
  const Tensor wf = MinusZeroPoint(w, wzp);
  const Tensor* conv_in[] = {&xf, &wf};
  return ConvKernel(node, conv_in, absl::MakeSpan(acc, 1));
}

// QLinearConv: the integer sums plus the i32 bias, requantized per output channel.
absl::Status QLinearConvKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  const Tensor& w = *inputs[3];
  const Tensor* bias = In(inputs, 8);
  Tensor& y = outputs[0];
  const int64_t m = w.dim(0);
  const QLinearOutput out{inputs[1], inputs[4], inputs[6], inputs[7]};
  if (absl::Status s = out.Check(node, m); !s.ok()) return s;
  Tensor acc(DType::kF32, y.shape());
  if (absl::Status s = IntegerConv(node, *inputs[0], In(inputs, 2), w, In(inputs, 5), &acc); !s.ok()) return s;
  const int64_t plane = y.num_elements() / std::max<int64_t>(y.dim(0) * m, 1);
  for (int64_t i = 0; i < y.num_elements(); ++i) {
    const int64_t c = (i / plane) % m;
    const int64_t b = bias == nullptr ? 0 : bias->data<int32_t>()[c];
    out.Store(static_cast<int64_t>(acc.data<float>()[i]) + b, c, y, i);
  }
  return absl::OkStatus();
}

// ConvInteger: the integer sums as i32.
absl::Status ConvIntegerKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  Tensor acc(DType::kF32, outputs[0].shape());
  if (absl::Status s = IntegerConv(node, *inputs[0], In(inputs, 2), *inputs[1], In(inputs, 3), &acc); !s.ok()) return s;
  for (int64_t i = 0; i < acc.num_elements(); ++i) outputs[0].data<int32_t>()[i] = static_cast<int32_t>(acc.data<float>()[i]);
  return absl::OkStatus();
}

// numpy matmul of u8 / i8 A and B less their zero points (A's per tensor or per row, B's per tensor or per
// column), in int64: store(batch, row, column, sum) for every output element.
template <typename Store>
absl::Status IntegerMatMul(const Node& node, const Tensor& a, const Tensor* azp, const Tensor& b, const Tensor* bzp,
                           int64_t* n_out, Store&& store) {
  int64_t m, k, n;
  MatMulExtents(a.shape(), b.shape(), &m, &k, &n);
  *n_out = n;
  if (azp != nullptr && azp->num_elements() != 1 && azp->num_elements() != m) {
    return absl::InvalidArgumentError(absl::StrCat(node.DebugName(), ": A's zero point has ", azp->num_elements(),
                                                   " entries; expected 1 or ", m, " (one per row of A)"));
  }
  if (bzp != nullptr && bzp->num_elements() != 1 && bzp->num_elements() != n) {
    return absl::InvalidArgumentError(absl::StrCat(node.DebugName(), ": B's zero point has ", bzp->num_elements(),
                                                   " entries; expected 1 or ", n, " (one per column of B)"));
  }
  auto zp = [](const Tensor* t, int64_t i) -> int64_t {
    return t == nullptr ? 0 : t->GetAsInt64(t->num_elements() == 1 ? 0 : i);
  };
  ForEachMatMulBatch(a.shape(), b.shape(), &m, &k, &n, [&](int64_t bi, int64_t aoff, int64_t boff) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t acc = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
          acc += (a.GetAsInt64(aoff + i * k + kk) - zp(azp, i)) * (b.GetAsInt64(boff + kk * n + j) - zp(bzp, j));
        }
        store(bi * m + i, j, acc);
      }
    }
  });
  return absl::OkStatus();
}

// QLinearMatMul: the integer matmul requantized per column of B.
absl::Status QLinearMatMulKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  const QLinearOutput out{inputs[1], inputs[4], inputs[6], inputs[7]};
  int64_t m, k, n;
  MatMulExtents(inputs[0]->shape(), inputs[3]->shape(), &m, &k, &n);
  if (absl::Status s = out.Check(node, n); !s.ok()) return s;
  Tensor& y = outputs[0];
  int64_t cols;
  return IntegerMatMul(node, *inputs[0], In(inputs, 2), *inputs[3], In(inputs, 5), &cols,
                       [&](int64_t row, int64_t j, int64_t acc) { out.Store(acc, j, y, row * cols + j); });
}

// MatMulInteger: the integer matmul wrapped to i32, as ONNX's int32 accumulation would.
absl::Status MatMulIntegerKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  int32_t* y = outputs[0].data<int32_t>();
  int64_t cols;
  return IntegerMatMul(node, *inputs[0], In(inputs, 2), *inputs[1], In(inputs, 3), &cols,
                       [&](int64_t row, int64_t j, int64_t acc) {
                         y[row * cols + j] = static_cast<int32_t>(static_cast<uint32_t>(acc));
                       });
}

absl::Status GemmKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  absl::Status s = RequireF32(node, inputs, {0, 1, 2});
  if (!s.ok()) return s;
  const Tensor& a = *inputs[0];
  const Tensor& b = *inputs[1];
  const Tensor* c = In(inputs, 2);
  const bool ta = node.GetInt("transA", 0) != 0;
  const bool tb = node.GetInt("transB", 0) != 0;
  const double alpha = node.GetFloat("alpha", 1.0f);
  const double beta = node.GetFloat("beta", 1.0f);
  const int64_t m = outputs[0].dim(0);
  const int64_t n = outputs[0].dim(1);
  const int64_t k = ta ? a.dim(0) : a.dim(1);
  std::vector<double> acc;
  if (tb) {
    // B is stored n x k: dot products along contiguous rows of B.
    acc.assign(m * n, 0.0);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const float* brow = b.data<float>() + j * k;
        double sum = 0;
        for (int64_t kk = 0; kk < k; ++kk)
          sum += static_cast<double>(a.data<float>()[ta ? kk * m + i : i * k + kk]) * brow[kk];
        acc[i * n + j] = sum;
      }
    }
  } else {
    MatMulRows(m, k, n, a.data<float>(), ta ? 1 : k, ta ? m : 1, b.data<float>(), &acc);
  }
  // C broadcasts unidirectionally to [m, n]: a leading 1 or a missing dimension repeats it.
  int64_t c_rows = 1, c_cols = 1;
  if (c != nullptr && c->rank() >= 1) c_cols = c->dim(c->rank() - 1);
  if (c != nullptr && c->rank() == 2) c_rows = c->dim(0);
  float* y = outputs[0].data<float>();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double v = alpha * acc[i * n + j];
      if (c != nullptr) v += beta * c->data<float>()[(c_rows == 1 ? 0 : i) * c_cols + (c_cols == 1 ? 0 : j)];
      y[i * n + j] = static_cast<float>(v);
    }
  }
  return absl::OkStatus();
}

template <typename T>
void ArgExtremeLoop(const Tensor& x, int axis, bool max, bool last, Tensor& y) {
  const int64_t outer = Product(x.shape(), 0, axis);
  const int64_t len = x.dim(axis);
  const int64_t inner = Product(x.shape(), axis + 1, x.shape().size());
  const T* xp = x.data<T>();
  int64_t* yp = y.data<int64_t>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      int64_t best = 0;
      for (int64_t i = 1; i < len; ++i) {
        const T v = xp[(o * len + i) * inner + j], b = xp[(o * len + best) * inner + j];
        const bool better = max ? (v > b || (last && v == b)) : (v < b || (last && v == b));
        if (better) best = i;
      }
      yp[o * inner + j] = best;
    }
  }
}

absl::Status ArgExtremeKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  const Tensor& x = *inputs[0];
  absl::StatusOr<int> axis = ResolveAxisAttr(node, "axis", 0, x.rank());
  if (!axis.ok()) return axis.status();
  if (x.dim(*axis) == 0) return absl::InvalidArgumentError(absl::StrCat(node.op_type(), ": the axis is empty"));
  const bool max = node.op_type() == "ArgMax", last = node.GetInt("select_last_index", 0) != 0;
  switch (x.dtype()) {
    case DType::kF32: ArgExtremeLoop<float>(x, *axis, max, last, outputs[0]); break;
    case DType::kI32: ArgExtremeLoop<int32_t>(x, *axis, max, last, outputs[0]); break;
    case DType::kI64: ArgExtremeLoop<int64_t>(x, *axis, max, last, outputs[0]); break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(node.op_type(), ": dtype ", DTypeName(x.dtype()),
                                                     " is not supported by the reference kernel"));
  }
  return absl::OkStatus();
}

// a before b in descending order, NaN above everything (PyTorch's topk and numpy's sort agree on that).
template <typename T>
bool Above(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return !std::isnan(b);
    if (std::isnan(b)) return false;
  }
  return a > b;
}

template <typename T>
void TopKLoop(const Tensor& x, int axis, int64_t k, bool largest, Tensor& values, Tensor& indices) {
  const int64_t outer = Product(x.shape(), 0, axis);
  const int64_t len = x.dim(axis);
  const int64_t inner = Product(x.shape(), axis + 1, x.shape().size());
  const T* xp = x.data<T>();
  T* vp = values.data<T>();
  int64_t* ip = indices.data<int64_t>();
  std::vector<int64_t> order(len);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      const T* row = xp + o * len * inner + j;
      std::iota(order.begin(), order.end(), 0);
      // Equal values keep index order (ONNX: the lower index first), which makes the order total: the k
      // first are selected, then sorted (a detection head's TopK keeps 300 of thousands).
      auto before = [&](int64_t a, int64_t b) {
        const T va = row[a * inner], vb = row[b * inner];
        if (largest ? Above(va, vb) : Above(vb, va)) return true;
        if (largest ? Above(vb, va) : Above(va, vb)) return false;
        return a < b;
      };
      if (k < len) std::nth_element(order.begin(), order.begin() + k, order.end(), before);
      std::sort(order.begin(), order.begin() + k, before);
      for (int64_t i = 0; i < k; ++i) {
        vp[(o * k + i) * inner + j] = row[order[i] * inner];
        ip[(o * k + i) * inner + j] = order[i];
      }
    }
  }
}

// Outputs are always sorted; with sorted=0 ONNX leaves the order open, so sorted output is one valid answer.
absl::Status TopKKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  const Tensor& x = *inputs[0];
  absl::StatusOr<int> axis = ResolveAxisAttr(node, "axis", -1, x.rank());
  if (!axis.ok()) return axis.status();
  const int64_t k = outputs[0].dim(*axis);
  const bool largest = node.GetInt("largest", 1) != 0;
  switch (x.dtype()) {
    case DType::kF32: TopKLoop<float>(x, *axis, k, largest, outputs[0], outputs[1]); break;
    case DType::kI32: TopKLoop<int32_t>(x, *axis, k, largest, outputs[0], outputs[1]); break;
    case DType::kI64: TopKLoop<int64_t>(x, *axis, k, largest, outputs[0], outputs[1]); break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("TopK: dtype ", DTypeName(x.dtype()),
                                                     " is not supported by the reference kernel"));
  }
  return absl::OkStatus();
}

// Acc is double for f32 (rounded once per output) and uint64 for the integer types, so that overflow wraps
// as two's-complement addition does instead of being undefined.
template <typename T, typename Acc>
void CumSumLoop(const Tensor& x, int axis, bool exclusive, bool reverse, Tensor& y) {
  const int64_t outer = Product(x.shape(), 0, axis);
  const int64_t len = x.dim(axis);
  const int64_t inner = Product(x.shape(), axis + 1, x.shape().size());
  const T* xp = x.data<T>();
  T* yp = y.data<T>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      Acc acc = 0;
      for (int64_t step = 0; step < len; ++step) {
        const int64_t i = reverse ? len - 1 - step : step;
        const int64_t at = (o * len + i) * inner + j;
        if (exclusive) {
          yp[at] = static_cast<T>(acc);
          acc += xp[at];
        } else {
          acc += xp[at];
          yp[at] = static_cast<T>(acc);
        }
      }
    }
  }
}

absl::Status CumSumKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  const Tensor& x = *inputs[0];
  absl::StatusOr<int> axis = NormalizeAxis(inputs[1]->GetAsInt64(0), x.rank(), "CumSum");
  if (!axis.ok()) return axis.status();
  const bool exclusive = node.GetInt("exclusive", 0) != 0, reverse = node.GetInt("reverse", 0) != 0;
  switch (x.dtype()) {
    case DType::kF32: CumSumLoop<float, double>(x, *axis, exclusive, reverse, outputs[0]); break;
    case DType::kF64: CumSumLoop<double, double>(x, *axis, exclusive, reverse, outputs[0]); break;
    case DType::kI32: CumSumLoop<int32_t, uint64_t>(x, *axis, exclusive, reverse, outputs[0]); break;
    case DType::kI64: CumSumLoop<int64_t, uint64_t>(x, *axis, exclusive, reverse, outputs[0]); break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("CumSum: dtype ", DTypeName(x.dtype()),
                                                     " is not supported by the reference kernel"));
  }
  return absl::OkStatus();
}

// Softmax, LogSoftmax and Hardmax along one axis.
absl::Status SoftmaxKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  absl::Status s = RequireF32(node, inputs, {0});
  if (!s.ok()) return s;
  const Tensor& x = *inputs[0];
  absl::StatusOr<int> axis = ResolveAxisAttr(node, "axis", -1, x.rank());
  if (!axis.ok()) return axis.status();
  const int64_t outer = Product(x.shape(), 0, *axis);
  const int64_t len = x.dim(*axis);
  const int64_t inner = Product(x.shape(), *axis + 1, x.shape().size());
  // Each [len, inner] block is processed row by row so that the inner loops stay contiguous.
  std::vector<double> mx(inner), sum(inner);
  for (int64_t o = 0; o < outer; ++o) {
    const float* xp = x.data<float>() + o * len * inner;
    float* yp = outputs[0].data<float>() + o * len * inner;
    std::fill(mx.begin(), mx.end(), -std::numeric_limits<double>::infinity());
    std::fill(sum.begin(), sum.end(), 0.0);
    for (int64_t i = 0; i < len; ++i) {
      for (int64_t j = 0; j < inner; ++j) mx[j] = std::max<double>(mx[j], xp[i * inner + j]);
    }
    for (int64_t i = 0; i < len; ++i) {
      for (int64_t j = 0; j < inner; ++j) sum[j] += std::exp(xp[i * inner + j] - mx[j]);
    }
    const std::string& op = node.op_type();
    for (int64_t j = 0; op == "Hardmax" && j < inner; ++j) {
      int64_t first = 0;  // the first maximum gets the one
      while (first < len - 1 && xp[first * inner + j] != mx[j]) ++first;
      for (int64_t i = 0; i < len; ++i) yp[i * inner + j] = i == first ? 1.0f : 0.0f;
    }
    for (int64_t i = 0; op != "Hardmax" && i < len; ++i) {
      for (int64_t j = 0; j < inner; ++j) {
        const double d = xp[i * inner + j] - mx[j];
        yp[i * inner + j] = static_cast<float>(op == "LogSoftmax" ? d - std::log(sum[j]) : std::exp(d) / sum[j]);
      }
    }
  }
  return absl::OkStatus();
}

// Offsets into a tensor of shape `from` (right-aligned, extents 1 or equal) for every element of `to`.
std::vector<int64_t> BroadcastOffsets(const std::vector<int64_t>& to, const std::vector<int64_t>& from) {
  const int64_t total = Product(to, 0, to.size());
  std::vector<int64_t> offsets(total);
  const size_t lead = to.size() - from.size();
  const std::vector<int64_t> from_strides = RowMajorStrides(from);
  for (int64_t i = 0; i < total; ++i) {
    int64_t rem = i, off = 0;
    for (size_t r = to.size(); r-- > 0;) {
      const int64_t idx = rem % to[r];
      rem /= to[r];
      if (r >= lead && from[r - lead] != 1) off += idx * from_strides[r - lead];
    }
    offsets[i] = off;
  }
  return offsets;
}

absl::Status LayerNormKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  absl::Status s = RequireF32(node, inputs, {0, 1, 2});
  if (!s.ok()) return s;
  const Tensor& x = *inputs[0];
  const Tensor& scale = *inputs[1];
  const Tensor* bias = In(inputs, 2);
  absl::StatusOr<int> axis = ResolveAxisAttr(node, "axis", -1, x.rank());
  if (!axis.ok()) return axis.status();
  const double eps = node.GetFloat("epsilon", 1e-5f);
  const std::vector<int64_t> normalized(x.shape().begin() + *axis, x.shape().end());
  const int64_t outer = Product(x.shape(), 0, *axis);
  const int64_t inner = Product(normalized, 0, normalized.size());
  const std::vector<int64_t> scale_off = BroadcastOffsets(normalized, scale.shape());
  const std::vector<int64_t> bias_off = bias ? BroadcastOffsets(normalized, bias->shape()) : std::vector<int64_t>();
  for (int64_t o = 0; o < outer; ++o) {
    const float* xp = x.data<float>() + o * inner;
    float* yp = outputs[0].data<float>() + o * inner;
    double mean = 0;
    for (int64_t i = 0; i < inner; ++i) mean += xp[i];
    mean /= inner;
    double var = 0;
    for (int64_t i = 0; i < inner; ++i) var += (xp[i] - mean) * (xp[i] - mean);
    var /= inner;
    const double inv_std = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < inner; ++i) {
      double v = (xp[i] - mean) * inv_std * scale.data<float>()[scale_off[i]];
      if (bias) v += bias->data<float>()[bias_off[i]];
      yp[i] = static_cast<float>(v);
    }
    // The optional Mean and InvStdDev outputs, one value per normalized row.
    if (outputs.size() > 1 && outputs[1].num_elements() == outer) outputs[1].data<float>()[o] = static_cast<float>(mean);
    if (outputs.size() > 2 && outputs[2].num_elements() == outer) outputs[2].data<float>()[o] = static_cast<float>(inv_std);
  }
  return absl::OkStatus();
}

// Normalizes x [N, C, ...] in blocks of `block` contiguous elements (one (n, c) plane, or the planes of
// one (n, group)): y = (x - mean) / sqrt(var + eps) * scale + bias, with affine(c, &scale, &bias) giving
// the terms of channel c, whose planes hold `plane` elements each.
template <typename Affine>
void NormalizeBlocks(const Tensor& x, int64_t block, int64_t plane, double eps, Affine affine, Tensor& y) {
  const int64_t channels = x.dim(1);
  const int64_t blocks = block == 0 ? 0 : x.num_elements() / block;
  for (int64_t b = 0; b < blocks; ++b) {
    const float* xp = x.data<float>() + b * block;
    float* yp = y.data<float>() + b * block;
    double mean = 0;
    for (int64_t i = 0; i < block; ++i) mean += xp[i];
    mean /= block;
    double var = 0;
    for (int64_t i = 0; i < block; ++i) var += (xp[i] - mean) * (xp[i] - mean);
    var /= block;
    const double inv_std = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < block; ++i) {
      const int64_t c = (b * block + i) / plane % channels;
      double scale, bias;
      affine(c, &scale, &bias);
      yp[i] = static_cast<float>((xp[i] - mean) * inv_std * scale + bias);
    }
  }
}

absl::Status InstanceNormKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  absl::Status s = RequireF32(node, inputs, {0, 1, 2});
  if (!s.ok()) return s;
  const Tensor& x = *inputs[0];
  const float* scale = inputs[1]->data<float>();
  const float* bias = inputs[2]->data<float>();
  const int64_t plane = Product(x.shape(), 2, x.shape().size());
  NormalizeBlocks(x, plane, plane, node.GetFloat("epsilon", 1e-5f),
                  [&](int64_t c, double* a, double* b) {
                    *a = scale[c];
                    *b = bias[c];
                  },
                  outputs[0]);
  return absl::OkStatus();
}

absl::Status GroupNormKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  absl::Status s = RequireF32(node, inputs, {0, 1, 2});
  if (!s.ok()) return s;
  const Tensor& x = *inputs[0];
  const int64_t groups = node.GetInt("num_groups", 1);
  const int64_t channels = x.dim(1);
  const int64_t plane = Product(x.shape(), 2, x.shape().size());
  const float* scale = inputs[1]->data<float>();
  const float* bias = inputs[2]->data<float>();
  // Inference allowed num_groups entries (opset 18) or one per channel (opset 21).
  const bool per_channel = inputs[1]->num_elements() == channels;
  const int64_t per_group = channels / groups;
  NormalizeBlocks(x, per_group * plane, plane, node.GetFloat("epsilon", 1e-5f),
                  [&](int64_t c, double* a, double* b) {
                    const int64_t k = per_channel ? c : c / per_group;
                    *a = scale[k];
                    *b = bias[k];
                  },
                  outputs[0]);
  return absl::OkStatus();
}

absl::Status ReduceKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  const Tensor& x = *inputs[0];
  const std::string& op = node.op_type();
  // Integer tensors (shape and index arithmetic: detection models take the min and max of box counts)
  // reduce exactly in int64 for the operators that stay integers.
  const bool integer = x.dtype() == DType::kI64 || x.dtype() == DType::kI32;
  if (integer && op != "ReduceMax" && op != "ReduceMin" && op != "ReduceSum" && op != "ReduceProd") {
    return absl::UnimplementedError(absl::StrCat("the reference ", op, " kernel supports f32, f64, and i32 / i64 for "
                                                 "ReduceMax, ReduceMin, ReduceSum and ReduceProd; input 0 is ",
                                                 DTypeName(x.dtype())));
  }
  // f64 reduces in double throughout (f32 accumulates in double too, then rounds once).
  const bool f64 = x.dtype() == DType::kF64;
  if (!integer && !f64) {
    absl::Status s = RequireF32(node, inputs, {0});
    if (!s.ok()) return s;
  }
  const Tensor* axes = In(inputs, 1);
  absl::StatusOr<ReduceParams> p = ResolveReduceParams(node, x.rank(), axes);
  if (!p.ok()) return p.status();
  // Accumulate into the keepdims-shaped output: reduced axes contribute stride 0.
  std::vector<int64_t> out_shape = x.shape();
  int64_t count = 1;
  for (int r = 0; r < x.rank(); ++r) {
    if (p->reduced[r]) {
      count *= out_shape[r];
      out_shape[r] = 1;
    }
  }
  const std::vector<int64_t> out_strides = RowMajorStrides(out_shape);
  std::vector<int64_t> step(x.rank());
  for (int r = 0; r < x.rank(); ++r) step[r] = p->reduced[r] ? 0 : out_strides[r];
  std::vector<int64_t> index(x.rank(), 0);
  int64_t off = 0;
  // Visits every element i of x with the offset of its output element.
  auto walk = [&](auto&& visit) {
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      visit(i, off);
      for (int r = x.rank() - 1; r >= 0; --r) {
        off += step[r];
        if (++index[r] < x.dim(r)) break;
        off -= step[r] * index[r];
        index[r] = 0;
      }
    }
  };
  const int64_t outputs_count = Product(out_shape, 0, out_shape.size());
  if (integer) {
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    const int64_t init = op == "ReduceMax" ? -kMax - 1 : op == "ReduceMin" ? kMax : op == "ReduceProd" ? 1 : 0;
    std::vector<int64_t> acc(outputs_count, init);
    walk([&](int64_t i, int64_t o) {
      const int64_t v = x.GetAsInt64(i);
      int64_t& a = acc[o];
      // Sums and products wrap like the fixed-width integers they model (computed unsigned: no UB).
      if (op == "ReduceMax") {
        a = std::max(a, v);
      } else if (op == "ReduceMin") {
        a = std::min(a, v);
      } else if (op == "ReduceProd") {
        a = static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(v));
      } else {
        a = static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(v));
      }
    });
    for (int64_t i = 0; i < outputs_count; ++i) {
      if (x.dtype() == DType::kI64) {
        outputs[0].data<int64_t>()[i] = acc[i];
      } else {
        outputs[0].data<int32_t>()[i] = static_cast<int32_t>(acc[i]);
      }
    }
    return absl::OkStatus();
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const double init = op == "ReduceMax" ? -kInf : op == "ReduceMin" ? kInf : op == "ReduceProd" ? 1.0 : 0.0;
  std::vector<double> acc(outputs_count, init);
  const float* xd = f64 ? nullptr : x.data<float>();
  const double* xd64 = f64 ? x.data<double>() : nullptr;
  walk([&](int64_t i, int64_t o) {
    const double v = f64 ? xd64[i] : xd[i];
    double& a = acc[o];
    if (op == "ReduceMax") {
      if (v > a || v != v) a = v;  // NaN propagates
    } else if (op == "ReduceMin") {
      if (v < a || v != v) a = v;
    } else if (op == "ReduceProd") {
      a *= v;
    } else if (op == "ReduceL1") {
      a += std::fabs(v);
    } else if (op == "ReduceL2" || op == "ReduceSumSquare") {
      a += v * v;
    } else if (op == "ReduceLogSumExp") {
      a += std::exp(v);
    } else {
      a += v;  // ReduceSum, ReduceMean, ReduceLogSum
    }
  });
  for (size_t i = 0; i < acc.size(); ++i) {
    double v = acc[i];
    if (op == "ReduceMean") v /= count;
    if (op == "ReduceL2") v = std::sqrt(v);
    if (op == "ReduceLogSum" || op == "ReduceLogSumExp") v = std::log(v);
    if (f64) {
      outputs[0].data<double>()[i] = v;
    } else {
      outputs[0].data<float>()[i] = static_cast<float>(v);
    }
  }
  return absl::OkStatus();
}

// Copies y[o] = x[src(o)] for every output element, where src maps each output coordinate per axis to
// an input coordinate, or to -1 for "use `fill`" (Pad's constant). Works on raw elements of any
// byte-aligned dtype.
void GatherByAxisMaps(const Tensor& x, const std::vector<std::vector<int64_t>>& maps, const void* fill, Tensor* y) {
  const size_t elem = DTypeBits(x.dtype()) / 8;
  const int rank = y->rank();
  const char* xd = static_cast<const char*>(x.raw_data());
  char* yd = static_cast<char*>(y->raw_data());
  if (rank == 0) {
    std::memcpy(yd, xd, elem);
    return;
  }
  if (y->num_elements() == 0) return;
  const std::vector<int64_t> xs = RowMajorStrides(x.shape());
  const std::vector<int64_t>& last = maps[rank - 1];
  const int64_t row_len = y->dim(rank - 1);
  const int64_t rows = y->num_elements() / row_len;
  std::vector<int64_t> index(rank - 1, 0);
  for (int64_t row = 0; row < rows; ++row) {
    int64_t base = 0;
    bool filled = false;
    for (int r = 0; r < rank - 1; ++r) {
      const int64_t src = maps[r][index[r]];
      if (src < 0) filled = true;
      base += src * xs[r];
    }
    char* out = yd + row * row_len * elem;
    for (int64_t j = 0; j < row_len; ++j) {
      const bool fill_here = filled || last[j] < 0;
      std::memcpy(out + j * elem, fill_here ? fill : xd + (base + last[j]) * elem, elem);
    }
    for (int r = rank - 2; r >= 0; --r) {
      if (++index[r] < y->dim(r)) break;
      index[r] = 0;
    }
  }
}

absl::Status PadKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  const Tensor& x = *inputs[0];
  absl::StatusOr<PadParams> p = ResolvePadParams(node, x.rank(), *inputs[1], In(inputs, 3));
  if (!p.ok()) return p.status();
  std::vector<std::vector<int64_t>> maps(x.rank());
  for (int r = 0; r < x.rank(); ++r) {
    const int64_t in = x.dim(r);
    const int64_t out = outputs[0].dim(r);
    maps[r].resize(out);
    for (int64_t o = 0; o < out; ++o) maps[r][o] = PadSourceIndex(p->mode, o, p->begin[r], in);
  }
  std::vector<char> fill(DTypeBits(x.dtype()) / 8, 0);
  const Tensor* value = In(inputs, 2);
  if (value != nullptr) std::memcpy(fill.data(), value->raw_data(), fill.size());
  GatherByAxisMaps(x, maps, fill.data(), &outputs[0]);
  return absl::OkStatus();
}

absl::Status ResizeKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  const Tensor& x = *inputs[0];
  Tensor& y = outputs[0];
  const Tensor* scales = In(inputs, 2);
  const Tensor* sizes = In(inputs, 3);
  const bool has_scales = scales != nullptr && scales->num_elements() > 0;
  const bool has_sizes = sizes != nullptr && sizes->num_elements() > 0;
  absl::StatusOr<ResizeParams> p =
      ResolveResizeParams(node, DimsOf(x.shape()), has_scales, scales, has_sizes, sizes, In(inputs, 1));
  if (!p.ok()) return p.status();
  const int rank = x.rank();
  const bool crop = p->coordinate_mode == ResizeParams::CoordinateMode::kTfCropAndResize;
  if (crop && (In(inputs, 1) == nullptr || In(inputs, 1)->num_elements() == 0)) {
    return absl::InvalidArgumentError("coordinate_transformation_mode tf_crop_and_resize needs the roi input");
  }
  if (crop && x.dtype() != DType::kF32) {
    return absl::UnimplementedError(
        absl::StrCat("tf_crop_and_resize on ", DTypeName(x.dtype()), " is not supported (f32 only)"));
  }
  // tf_crop_and_resize: per axis, the output indices whose source lies outside the input.
  std::vector<std::vector<bool>> outside(rank);
  bool any_outside = false;
  for (int r = 0; r < rank; ++r) {
    for (int64_t o = 0; o < y.dim(r); ++o) {
      const bool out = ResizeOutside(*p, ResizeSourceCoordinate(*p, r, o, x.dim(r), y.dim(r)), x.dim(r));
      outside[r].push_back(out);
      any_outside = any_outside || out;
    }
  }
  if (p->mode == ResizeParams::Mode::kNearest) {
    std::vector<std::vector<int64_t>> maps(rank);
    for (int r = 0; r < rank; ++r) {
      for (int64_t o = 0; o < y.dim(r); ++o) {
        const double src = ResizeSourceCoordinate(*p, r, o, x.dim(r), y.dim(r));
        maps[r].push_back(outside[r][o] ? -1 : ResizeNearestIndex(p->nearest_mode, src, x.dim(r)));
      }
    }
    if (x.num_elements() == 0 && y.num_elements() > 0) {
      return absl::InvalidArgumentError("cannot resize an empty input to a non-empty output");
    }
    const float fill = static_cast<float>(p->extrapolation_value);
    GatherByAxisMaps(x, maps, crop ? &fill : nullptr, &y);
    return absl::OkStatus();
  }
  absl::Status s = RequireF32(node, inputs, {0});
  if (!s.ok()) return s;
  if (x.num_elements() == 0 && y.num_elements() > 0) {
    return absl::InvalidArgumentError("cannot resize an empty input to a non-empty output");
  }
  // Linear and cubic interpolation are separable: interpolate along one axis at a time, in double, each
  // output index a weighted sum of `taps` input rows.
  const bool cubic = p->mode == ResizeParams::Mode::kCubic;
  const int taps = cubic ? 4 : 2;
  std::vector<int64_t> shape = x.shape();
  std::vector<double> cur(x.data<float>(), x.data<float>() + x.num_elements());
  for (int r = 0; r < rank; ++r) {
    const int64_t in = shape[r];
    const int64_t out = y.dim(r);
    // Per output index: taps source indices and weights.
    std::vector<int64_t> idx(out * taps);
    std::vector<double> wt(out * taps);
    bool identity = in == out;
    for (int64_t o = 0; o < out; ++o) {
      int64_t* i = &idx[o * taps];
      double* w = &wt[o * taps];
      const double coord = ResizeSourceCoordinate(*p, r, o, in, out);
      if (!cubic) {
        // Clamping the coordinate into the input equals ONNX's edge replication of out-of-range neighbors.
        const double src = std::clamp(coord, 0.0, static_cast<double>(in - 1));
        i[0] = static_cast<int64_t>(std::floor(src));
        i[1] = std::min(i[0] + 1, in - 1);
        w[1] = src - i[0];
        w[0] = 1.0 - w[1];
        identity = identity && i[0] == o && w[1] == 0.0;
        continue;
      }
      // Keys' cubic convolution on input indices floor(x) - 1 .. floor(x) + 2 (ONNX's _cubic_coeffs),
      // edge values past the ends, or with exclude_outside those taps dropped and the rest renormalized.
      const double a = p->cubic_coeff_a;
      const double f = std::floor(coord), t = coord - f;
      const double d[4] = {1.0 + t, t, 1.0 - t, 2.0 - t};  // distances to the four taps
      double sum = 0.0;
      for (int k = 0; k < 4; ++k) {
        const double s = d[k];
        w[k] = s <= 1.0 ? ((a + 2.0) * s - (a + 3.0)) * s * s + 1.0 : ((a * s - 5.0 * a) * s + 8.0 * a) * s - 4.0 * a;
        const int64_t j = static_cast<int64_t>(f) - 1 + k;
        if (p->exclude_outside && (j < 0 || j >= in)) w[k] = 0.0;
        sum += w[k];
        i[k] = std::clamp<int64_t>(j, 0, in - 1);
      }
      if (p->exclude_outside && sum != 0.0) {
        for (int k = 0; k < 4; ++k) w[k] /= sum;
      }
      identity = identity && t == 0.0 && i[1] == o;
    }
    if (identity) continue;
    const int64_t outer = Product(shape, 0, r);
    const int64_t inner = Product(shape, r + 1, shape.size());
    std::vector<double> next(outer * out * inner);
    for (int64_t b = 0; b < outer; ++b) {
      for (int64_t o = 0; o < out; ++o) {
        double* dst = next.data() + (b * out + o) * inner;
        const double* row0 = cur.data() + (b * in + idx[o * taps]) * inner;
        const double* row1 = cur.data() + (b * in + idx[o * taps + 1]) * inner;
        const double w0 = wt[o * taps], w1 = wt[o * taps + 1];
        for (int64_t j = 0; j < inner; ++j) dst[j] = row0[j] * w0 + row1[j] * w1;
        for (int k = 2; k < taps; ++k) {
          const double* row = cur.data() + (b * in + idx[o * taps + k]) * inner;
          const double w = wt[o * taps + k];
          for (int64_t j = 0; j < inner; ++j) dst[j] += row[j] * w;
        }
      }
    }
    cur = std::move(next);
    shape[r] = out;
  }
  float* yd = y.data<float>();
  for (size_t i = 0; i < cur.size(); ++i) yd[i] = static_cast<float>(cur[i]);
  if (any_outside) {
    // An output whose source is outside the input along any axis takes the extrapolation value.
    std::vector<int64_t> index(rank, 0);
    for (int64_t i = 0; i < y.num_elements(); ++i) {
      bool out = false;
      for (int r = 0; r < rank; ++r) out = out || outside[r][index[r]];
      if (out) yd[i] = static_cast<float>(p->extrapolation_value);
      for (int r = rank - 1; r >= 0; --r) {
        if (++index[r] < y.dim(r)) break;
        index[r] = 0;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterNnReferenceKernels(ReferenceKernelRegistry& r) {
  r.Register("", "Conv", ConvKernel);
  r.Register("", "ConvTranspose", ConvTransposeKernel);
  r.Register("", "BatchNormalization", BatchNormKernel);
  r.Register("", "MaxPool", PoolKernel);
  r.Register("", "MaxUnpool", MaxUnpoolKernel);
  r.Register("", "Det", DetKernel);
  r.Register("", "AveragePool", PoolKernel);
  r.Register("", "GlobalAveragePool", GlobalPoolKernel);
  r.Register("", "GlobalMaxPool", GlobalPoolKernel);
  r.Register("", "LRN", LrnKernel);
  r.Register("", "MeanVarianceNormalization", MvnKernel);
  r.Register("", "MatMul", MatMulKernel);
  r.Register("", "MatMulInteger", MatMulIntegerKernel);
  r.Register("", "QLinearConv", QLinearConvKernel);
  r.Register("", "QLinearMatMul", QLinearMatMulKernel);
  r.Register("", "ConvInteger", ConvIntegerKernel);
  r.Register("", "Gemm", GemmKernel);
  r.Register("", "Softmax", SoftmaxKernel);
  r.Register("", "LayerNormalization", LayerNormKernel);
  r.Register("", "InstanceNormalization", InstanceNormKernel);
  r.Register("", "GroupNormalization", GroupNormKernel);
  r.Register("", "ReduceMean", ReduceKernel);
  r.Register("", "ReduceSum", ReduceKernel);
  for (const char* op : {"ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
                         "ReduceLogSumExp", "ReduceSumSquare"}) {
    r.Register("", op, ReduceKernel);
  }
  r.Register("", "ArgMax", ArgExtremeKernel);
  r.Register("", "ArgMin", ArgExtremeKernel);
  r.Register("", "LogSoftmax", SoftmaxKernel);
  r.Register("", "Hardmax", SoftmaxKernel);
  r.Register("", "TopK", TopKKernel);
  r.Register("", "CumSum", CumSumKernel);
  r.Register("", "Pad", PadKernel);
  r.Register("", "Resize", ResizeKernel);
}

}  // namespace tessel
