// Attribute decoding for the neural-network operators; see nn_params.h.
#include "graph/ops/nn_params.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/op_registry.h"

namespace tessel {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

// A per-spatial-dimension list attribute: `count` values, each at least `min_value`; `def` when absent.
absl::StatusOr<std::vector<int64_t>> SpatialInts(const Node& node, const std::string& name, int count, int64_t def,
                                                 int64_t min_value) {
  const Attribute* a = node.FindAttr(name);
  if (a == nullptr) return std::vector<int64_t>(count, def);
  if (a->kind != Attribute::Kind::kInts) {
    return absl::InvalidArgumentError(absl::StrCat("attribute '", name, "' must be a list of ints"));
  }
  if (static_cast<int>(a->ints.size()) != count) {
    return absl::InvalidArgumentError(absl::StrCat("attribute '", name, "' has ", a->ints.size(), " values [",
                                                   absl::StrJoin(a->ints, ","), "], expected ", count));
  }
  for (int64_t v : a->ints) {
    if (v < min_value) {
      return absl::InvalidArgumentError(absl::StrCat("attribute '", name, "' = [", absl::StrJoin(a->ints, ","),
                                                     "]: every value must be at least ", min_value));
    }
  }
  return a->ints;
}

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

absl::StatusOr<AutoPad> ParseAutoPad(const Node& node) {
  const std::string s = node.GetString("auto_pad", "NOTSET");
  if (s == "NOTSET") return AutoPad::kNotSet;
  if (s == "SAME_UPPER") return AutoPad::kSameUpper;
  if (s == "SAME_LOWER") return AutoPad::kSameLower;
  if (s == "VALID") return AutoPad::kValid;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown auto_pad '", s, "' (expected NOTSET, SAME_UPPER, SAME_LOWER or VALID)"));
}

// Reads strides, dilations, pads and auto_pad (p->kernel already set) and computes padding and output
// extents following the ONNX Conv/MaxPool output-shape formulas.
absl::Status ResolveWindow(const Node& node, absl::Span<const Dim> x_dims, bool ceil_mode, WindowParams* p) {
  const int ns = p->num_spatial();
  absl::StatusOr<std::vector<int64_t>> strides = SpatialInts(node, "strides", ns, 1, 1);
  if (!strides.ok()) return strides.status();
  absl::StatusOr<std::vector<int64_t>> dilations = SpatialInts(node, "dilations", ns, 1, 1);
  if (!dilations.ok()) return dilations.status();
  absl::StatusOr<std::vector<int64_t>> pads = SpatialInts(node, "pads", 2 * ns, 0, 0);
  if (!pads.ok()) return pads.status();
  absl::StatusOr<AutoPad> auto_pad = ParseAutoPad(node);
  if (!auto_pad.ok()) return auto_pad.status();
  const bool explicit_pads = std::any_of(pads->begin(), pads->end(), [](int64_t v) { return v != 0; });
  if (*auto_pad != AutoPad::kNotSet && explicit_pads) {
    return absl::InvalidArgumentError(absl::StrCat("auto_pad '", node.GetString("auto_pad", ""),
                                                   "' cannot be combined with explicit pads [",
                                                   absl::StrJoin(*pads, ","), "]"));
  }
  p->strides = *strides;
  p->dilations = *dilations;
  p->pads_begin.assign(pads->begin(), pads->begin() + ns);
  p->pads_end.assign(pads->begin() + ns, pads->end());
  p->output.clear();
  for (int i = 0; i < ns; ++i) {
    const Dim& in = x_dims[2 + i];
    const int64_t s = p->strides[i];
    const int64_t keff = (p->kernel[i] - 1) * p->dilations[i] + 1;
    int64_t& pb = p->pads_begin[i];
    int64_t& pe = p->pads_end[i];
    if (*auto_pad == AutoPad::kSameUpper || *auto_pad == AutoPad::kSameLower) {
      // ONNX: output = ceil(input / stride), padding split evenly with the odd element at the end (UPPER)
      // or the beginning (LOWER). ceil_mode does not apply.
      if (!in.is_static()) {
        p->output.push_back(s == 1 ? in : UnknownDim());
        continue;
      }
      const int64_t out = CeilDiv(in.value(), s);
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + keff - in.value());
      const int64_t half = total / 2;
      pb = *auto_pad == AutoPad::kSameUpper ? half : total - half;
      pe = total - pb;
      p->output.push_back(out);
      continue;
    }
    // VALID is NOTSET with zero padding; the ONNX formula for it ignores ceil_mode.
    const bool ceil = ceil_mode && *auto_pad == AutoPad::kNotSet;
    if (!in.is_static()) {
      p->output.push_back(s == 1 && pb + pe == keff - 1 ? in : UnknownDim());
      continue;
    }
    const int64_t span = in.value() + pb + pe - keff;
    if (span < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "window of extent ", keff, " (kernel ", p->kernel[i], ", dilation ", p->dilations[i],
          ") does not fit spatial dimension ", i, " of extent ", in.value(), " with padding ", pb, "+", pe));
    }
    int64_t out = (ceil ? CeilDiv(span, s) : span / s) + 1;
    // A window that would start in the end padding is dropped (as PyTorch and the ONNX spec do).
    if (ceil && (out - 1) * s >= in.value() + pb) --out;
    p->output.push_back(out);
  }
  return absl::OkStatus();
}

// The kernel extents of Conv and ConvTranspose: the kernel_shape attribute, checked against the weight's
// trailing dimensions, or those dimensions.
absl::Status ResolveKernelShape(const Node& node, absl::Span<const Dim> w_dims, WindowParams* p) {
  const int ns = static_cast<int>(w_dims.size()) - 2;
  p->kernel.clear();
  if (node.HasAttr("kernel_shape")) {
    absl::StatusOr<std::vector<int64_t>> k = SpatialInts(node, "kernel_shape", ns, 1, 1);
    if (!k.ok()) return k.status();
    p->kernel = *k;
  }
  for (int i = 0; i < ns; ++i) {
    const Dim& wk = w_dims[2 + i];
    if (p->kernel.size() == static_cast<size_t>(ns)) {
      if (wk.is_static() && wk.value() != p->kernel[i]) {
        return absl::InvalidArgumentError(absl::StrCat("kernel_shape [", absl::StrJoin(p->kernel, ","),
                                                       "] disagrees with weight kernel dimension ", i, " = ",
                                                       wk.value()));
      }
    } else if (!wk.is_static()) {
      return absl::InvalidArgumentError(
          absl::StrCat("weight kernel dimension ", i, " is symbolic (", wk.symbol(), ") and there is no kernel_shape"));
    }
  }
  if (p->kernel.empty()) {
    for (int i = 0; i < ns; ++i) p->kernel.push_back(w_dims[2 + i].value());
  }
  for (int64_t k : p->kernel) {
    if (k < 1) return absl::InvalidArgumentError("weight has an empty kernel dimension");
  }
  return absl::OkStatus();
}

absl::Status CheckSpatialRank(absl::Span<const Dim> x_dims) {
  if (x_dims.size() < 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("input has rank ", x_dims.size(), ", expected [N, C, spatial...] with at least one spatial dim"));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank, const std::string& what) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", axis, " is out of range for rank ", rank, " (expected ", -rank, " to ", rank - 1, ")"));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// Normalizes a list of axes and rejects duplicates.
absl::StatusOr<std::vector<int>> NormalizeAxes(const std::vector<int64_t>& axes, int rank, const std::string& what) {
  std::vector<int> out;
  std::vector<bool> seen(rank, false);
  for (int64_t a : axes) {
    absl::StatusOr<int> n = NormalizeAxis(a, rank, what);
    if (!n.ok()) return n.status();
    if (seen[*n]) {
      return absl::InvalidArgumentError(absl::StrCat(what, "s [", absl::StrJoin(axes, ","), "] repeat axis ", *n));
    }
    seen[*n] = true;
    out.push_back(*n);
  }
  return out;
}

}  // namespace

std::vector<Dim> DimsOf(absl::Span<const int64_t> shape) { return std::vector<Dim>(shape.begin(), shape.end()); }

absl::StatusOr<int> ResolveAxisAttr(const Node& node, const std::string& name, int64_t def, int rank) {
  return NormalizeAxis(node.GetInt(name, def), rank, name);
}

absl::StatusOr<ConvParams> ResolveConvParams(const Node& node, absl::Span<const Dim> x_dims,
                                             absl::Span<const Dim> w_dims) {
  absl::Status s = CheckSpatialRank(x_dims);
  if (!s.ok()) return s;
  if (w_dims.size() != x_dims.size()) {
    return absl::InvalidArgumentError(absl::StrCat("weight has rank ", w_dims.size(), " but input has rank ",
                                                   x_dims.size(), " (expected [M, C/group, kernel...])"));
  }
  ConvParams p;
  p.group = node.GetInt("group", 1);
  if (p.group < 1) return absl::InvalidArgumentError(absl::StrCat("group must be at least 1, got ", p.group));
  const Dim& c = x_dims[1];
  const Dim& m = w_dims[0];
  const Dim& cg = w_dims[1];
  if (c.is_static() && cg.is_static() && c.value() != cg.value() * p.group) {
    return absl::InvalidArgumentError(absl::StrCat("weight has ", cg.value(),
                                                   " input channels per group but input has ", c.value(),
                                                   " channels and group=", p.group));
  }
  if (m.is_static() && m.value() % p.group != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("weight has ", m.value(), " output channels, which group=", p.group, " does not divide"));
  }
  s = ResolveKernelShape(node, w_dims, &p);
  if (!s.ok()) return s;
  s = ResolveWindow(node, x_dims, /*ceil_mode=*/false, &p);
  if (!s.ok()) return s;
  return p;
}

absl::StatusOr<ConvTransposeParams> ResolveConvTransposeParams(const Node& node, absl::Span<const Dim> x_dims,
                                                               absl::Span<const Dim> w_dims) {
  absl::Status s = CheckSpatialRank(x_dims);
  if (!s.ok()) return s;
  if (w_dims.size() != x_dims.size()) {
    return absl::InvalidArgumentError(absl::StrCat("weight has rank ", w_dims.size(), " but input has rank ",
                                                   x_dims.size(), " (expected [C, M/group, kernel...])"));
  }
  const int ns = static_cast<int>(x_dims.size()) - 2;
  ConvTransposeParams p;
  p.group = node.GetInt("group", 1);
  if (p.group < 1) return absl::InvalidArgumentError(absl::StrCat("group must be at least 1, got ", p.group));
  const Dim& c = x_dims[1];
  if (c.is_static() && w_dims[0].is_static() && c.value() != w_dims[0].value()) {
    return absl::InvalidArgumentError(absl::StrCat("weight has ", w_dims[0].value(), " input channels but input has ",
                                                   c.value(), " (ConvTranspose weights are [C, M/group, kernel...])"));
  }
  if (c.is_static() && c.value() % p.group != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("input has ", c.value(), " channels, which group=", p.group, " does not divide"));
  }
  s = ResolveKernelShape(node, w_dims, &p);
  if (!s.ok()) return s;
  absl::StatusOr<std::vector<int64_t>> strides = SpatialInts(node, "strides", ns, 1, 1);
  if (!strides.ok()) return strides.status();
  absl::StatusOr<std::vector<int64_t>> dilations = SpatialInts(node, "dilations", ns, 1, 1);
  if (!dilations.ok()) return dilations.status();
  absl::StatusOr<std::vector<int64_t>> pads = SpatialInts(node, "pads", 2 * ns, 0, 0);
  if (!pads.ok()) return pads.status();
  absl::StatusOr<std::vector<int64_t>> output_padding = SpatialInts(node, "output_padding", ns, 0, 0);
  if (!output_padding.ok()) return output_padding.status();
  absl::StatusOr<AutoPad> auto_pad = ParseAutoPad(node);
  if (!auto_pad.ok()) return auto_pad.status();
  std::vector<int64_t> output_shape = node.GetInts("output_shape");
  // Some exporters write the whole output shape [N, M, spatial...]; only the spatial extents matter.
  if (output_shape.size() == static_cast<size_t>(ns) + 2) {
    output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  }
  if (!output_shape.empty() && output_shape.size() != static_cast<size_t>(ns)) {
    return absl::InvalidArgumentError(absl::StrCat("attribute 'output_shape' = [", absl::StrJoin(output_shape, ","),
                                                   "] has ", output_shape.size(), " values, expected ", ns));
  }
  p.strides = *strides;
  p.dilations = *dilations;
  p.output_padding = *output_padding;
  p.pads_begin.assign(pads->begin(), pads->begin() + ns);
  p.pads_end.assign(pads->begin() + ns, pads->end());
  for (int i = 0; i < ns; ++i) {
    if (p.output_padding[i] >= std::max(p.strides[i], p.dilations[i])) {
      return absl::InvalidArgumentError(absl::StrCat("output_padding ", p.output_padding[i], " on spatial dimension ",
                                                     i, " must be below the stride or the dilation"));
    }
    const Dim& in = x_dims[2 + i];
    const int64_t keff = (p.kernel[i] - 1) * p.dilations[i] + 1;
    const bool same = *auto_pad == AutoPad::kSameUpper || *auto_pad == AutoPad::kSameLower;
    if (*auto_pad == AutoPad::kValid) p.pads_begin[i] = p.pads_end[i] = 0;
    if (!in.is_static()) {
      p.output.push_back(output_shape.empty() ? UnknownDim() : Dim(output_shape[i]));
      continue;
    }
    // ONNX: the full output is stride * (in - 1) + output_padding + keff; pads (given, or derived from
    // output_shape or SAME) crop it. Derived padding puts the odd element at the end for SAME_UPPER and at
    // the beginning otherwise.
    const int64_t full = p.strides[i] * (in.value() - 1) + p.output_padding[i] + keff;
    if (!output_shape.empty() || same) {
      const int64_t out = !output_shape.empty() ? output_shape[i] : in.value() * p.strides[i];
      if (out < 1) {
        return absl::InvalidArgumentError(absl::StrCat("output extent ", out, " on spatial dimension ", i,
                                                       " must be positive"));
      }
      // A wanted extent past the full one gives negative padding: extra positions that hold only the bias
      // (ONNX's reference and ONNX Runtime agree), at the end unless SAME_UPPER.
      const int64_t total = full - out;
      const int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);  // floor(total / 2)
      p.pads_begin[i] = *auto_pad == AutoPad::kSameUpper ? half : total - half;
      p.pads_end[i] = total - p.pads_begin[i];
    }
    const int64_t out = full - p.pads_begin[i] - p.pads_end[i];
    if (out < 0) {
      return absl::InvalidArgumentError(absl::StrCat("pads ", p.pads_begin[i], "+", p.pads_end[i],
                                                     " crop more than the ", full,
                                                     " elements of spatial dimension ", i));
    }
    p.output.push_back(out);
  }
  return p;
}

absl::StatusOr<RnnParams> ResolveRnnParams(const Node& node, absl::Span<const Dim> x_dims,
                                           absl::Span<const Dim> w_dims, absl::Span<const Dim> r_dims) {
  const std::string& op = node.op_type();
  RnnParams p;
  p.gates = op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
  if (x_dims.size() != 3 || w_dims.size() != 3 || r_dims.size() != 3) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": X, W and R must have rank 3, got ranks ", x_dims.size(),
                                                   ", ", w_dims.size(), ", ", r_dims.size()));
  }
  const std::string direction = node.GetString("direction", "forward");
  if (direction == "bidirectional") {
    p.directions = 2;
  } else if (direction == "reverse") {
    p.reverse = true;
  } else if (direction != "forward") {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": direction '", direction, "' is not forward, reverse or bidirectional"));
  }
  const int64_t layout = node.GetInt("layout", 0);
  if (layout != 0 && layout != 1) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": layout ", layout, " is not 0 or 1"));
  }
  p.batch_first = layout == 1;
  p.clip = node.GetFloat("clip", 0);
  if (p.clip < 0) return absl::InvalidArgumentError(absl::StrCat(op, ": clip ", p.clip, " is negative"));
  p.linear_before_reset = node.GetInt("linear_before_reset", 0) != 0;
  if (node.GetInt("input_forget", 0) != 0) {
    return absl::UnimplementedError(
        absl::StrCat(op, ": input_forget=1 (coupled input and forget gates) is not supported"));
  }
  p.hidden = r_dims[2];
  if (node.HasAttr("hidden_size")) {
    const int64_t h = node.GetInt("hidden_size", 0);
    if (h < 1) return absl::InvalidArgumentError(absl::StrCat(op, ": hidden_size ", h, " is not positive"));
    if (p.hidden.is_static() && p.hidden.value() != h) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": hidden_size ", h, " disagrees with R's last extent ",
                                                     p.hidden.value()));
    }
    p.hidden = h;
  }
  auto check = [&](const Dim& d, int64_t want, const char* what) -> absl::Status {
    if (d.is_static() && d.value() != want) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": ", what, " is ", d.value(), ", expected ", want));
    }
    return absl::OkStatus();
  };
  for (const absl::Span<const Dim>& dims : {w_dims, r_dims}) {
    if (absl::Status s = check(dims[0], p.directions, "the weights' direction extent"); !s.ok()) return s;
    if (p.hidden.is_static()) {
      if (absl::Status s = check(dims[1], p.gates * p.hidden.value(), "the weights' gate extent"); !s.ok()) return s;
    }
  }
  if (absl::Status s = check(w_dims[2], x_dims[2].is_static() ? x_dims[2].value() : -1, "W's input extent");
      x_dims[2].is_static() && !s.ok()) {
    return s;
  }
  const int per_direction = p.gates == 1 ? 1 : p.gates == 3 ? 2 : 3;
  std::vector<std::string> names;
  if (const Attribute* a = node.FindAttr("activations"); a != nullptr) {
    if (a->kind != Attribute::Kind::kStrings) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": 'activations' must be a list of strings"));
    }
    names = a->strings;
  }
  if (names.empty()) {
    const char* defaults[] = {"Sigmoid", "Tanh", "Tanh"};
    for (int d = 0; d < p.directions; ++d) {
      for (int i = 0; i < per_direction; ++i) names.push_back(p.gates == 1 ? "Tanh" : defaults[i]);
    }
  }
  if (static_cast<int>(names.size()) != per_direction * p.directions) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": 'activations' has ", names.size(), " entries, expected ",
                                                   per_direction * p.directions));
  }
  if (node.HasAttr("activation_alpha") || node.HasAttr("activation_beta")) {
    return absl::UnimplementedError(absl::StrCat(op, ": activation_alpha / activation_beta are not supported"));
  }
  p.activations.resize(p.directions);
  for (int d = 0; d < p.directions; ++d) {
    for (int i = 0; i < per_direction; ++i) {
      const std::string& a = names[d * per_direction + i];
      if (a == "Sigmoid") {
        p.activations[d].push_back(RnnActivation::kSigmoid);
      } else if (a == "Tanh") {
        p.activations[d].push_back(RnnActivation::kTanh);
      } else if (a == "Relu") {
        p.activations[d].push_back(RnnActivation::kRelu);
      } else {
        return absl::UnimplementedError(
            absl::StrCat(op, ": activation '", a, "' is not supported (Sigmoid, Tanh, Relu)"));
      }
    }
  }
  return p;
}

absl::StatusOr<PoolParams> ResolvePoolParams(const Node& node, absl::Span<const Dim> x_dims) {
  absl::Status s = CheckSpatialRank(x_dims);
  if (!s.ok()) return s;
  const int ns = static_cast<int>(x_dims.size()) - 2;
  if (!node.HasAttr("kernel_shape")) return absl::InvalidArgumentError("missing required attribute 'kernel_shape'");
  absl::StatusOr<std::vector<int64_t>> k = SpatialInts(node, "kernel_shape", ns, 1, 1);
  if (!k.ok()) return k.status();
  PoolParams p;
  p.kernel = *k;
  p.ceil_mode = node.GetInt("ceil_mode", 0) != 0;
  p.count_include_pad = node.GetInt("count_include_pad", 0) != 0;
  s = ResolveWindow(node, x_dims, p.ceil_mode, &p);
  if (!s.ok()) return s;
  return p;
}

absl::StatusOr<ReduceParams> ResolveReduceParams(const Node& node, int rank, const Tensor* axes) {
  if (node.HasAttr("axes")) {
    return absl::InvalidArgumentError(
        "has an 'axes' attribute (the pre-opset-18 form); the IR takes axes as the optional second input");
  }
  ReduceParams p;
  p.keepdims = node.GetInt("keepdims", 1) != 0;
  const bool noop_with_empty_axes = node.GetInt("noop_with_empty_axes", 0) != 0;
  if (axes == nullptr || axes->num_elements() == 0) {
    p.noop = noop_with_empty_axes;
    p.reduced.assign(rank, !p.noop);
    return p;
  }
  absl::StatusOr<std::vector<int>> norm = NormalizeAxes(axes->ToInt64Vector(), rank, "axis");
  if (!norm.ok()) return norm.status();
  p.reduced.assign(rank, false);
  for (int a : *norm) p.reduced[a] = true;
  return p;
}

absl::StatusOr<PadMode> ResolvePadMode(const Node& node) {
  const std::string mode = node.GetString("mode", "constant");
  if (mode == "constant") return PadMode::kConstant;
  if (mode == "reflect") return PadMode::kReflect;
  if (mode == "edge") return PadMode::kEdge;
  if (mode == "wrap") return absl::UnimplementedError("Pad mode 'wrap' is not supported");
  return absl::InvalidArgumentError(absl::StrCat("unknown Pad mode '", mode, "' (expected constant, reflect or edge)"));
}

absl::StatusOr<std::vector<int>> ResolvePadAxes(int rank, const Tensor* axes) {
  if (axes == nullptr) {
    std::vector<int> all(rank);
    for (int i = 0; i < rank; ++i) all[i] = i;
    return all;
  }
  return NormalizeAxes(axes->ToInt64Vector(), rank, "pad axis");
}

int64_t PadSourceIndex(PadMode mode, int64_t o, int64_t begin, int64_t in) {
  const int64_t i = o - begin;
  if (mode == PadMode::kConstant) return i < 0 || i >= in ? -1 : i;
  if (mode == PadMode::kEdge) return std::clamp<int64_t>(i, 0, in - 1);
  if (in == 1) return 0;
  const int64_t period = 2 * (in - 1);
  const int64_t m = ((i % period) + period) % period;
  return m < in ? m : period - m;
}

absl::StatusOr<PadParams> ResolvePadParams(const Node& node, int rank, const Tensor& pads, const Tensor* axes) {
  PadParams p;
  absl::StatusOr<PadMode> mode = ResolvePadMode(node);
  if (!mode.ok()) return mode.status();
  p.mode = *mode;
  absl::StatusOr<std::vector<int>> ax = ResolvePadAxes(rank, axes);
  if (!ax.ok()) return ax.status();
  const std::vector<int64_t> v = pads.ToInt64Vector();
  if (v.size() != 2 * ax->size()) {
    return absl::InvalidArgumentError(absl::StrCat("pads has ", v.size(), " values [", absl::StrJoin(v, ","),
                                                   "], expected ", 2 * ax->size(), " (begin and end for each of ",
                                                   ax->size(), " axes)"));
  }
  p.begin.assign(rank, 0);
  p.end.assign(rank, 0);
  for (size_t j = 0; j < ax->size(); ++j) {
    p.begin[(*ax)[j]] = v[j];
    p.end[(*ax)[j]] = v[j + ax->size()];
  }
  return p;
}

absl::StatusOr<ResizeParams> ResolveResizeParams(const Node& node, absl::Span<const Dim> x_dims, bool has_scales,
                                                 const Tensor* scales, bool has_sizes, const Tensor* sizes,
                                                 const Tensor* roi) {
  ResizeParams p;
  const std::string mode = node.GetString("mode", "nearest");
  if (mode == "nearest") {
    p.mode = ResizeParams::Mode::kNearest;
  } else if (mode == "linear") {
    p.mode = ResizeParams::Mode::kLinear;
  } else if (mode == "cubic") {
    p.mode = ResizeParams::Mode::kCubic;
    p.cubic_coeff_a = node.GetFloat("cubic_coeff_a", -0.75f);
    p.exclude_outside = node.GetInt("exclude_outside", 0) != 0;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown Resize mode '", mode, "' (expected nearest, linear or cubic)"));
  }
  const std::string coord = node.GetString("coordinate_transformation_mode", "half_pixel");
  if (coord == "half_pixel") {
    p.coordinate_mode = ResizeParams::CoordinateMode::kHalfPixel;
  } else if (coord == "pytorch_half_pixel") {
    p.coordinate_mode = ResizeParams::CoordinateMode::kPytorchHalfPixel;
  } else if (coord == "align_corners") {
    p.coordinate_mode = ResizeParams::CoordinateMode::kAlignCorners;
  } else if (coord == "asymmetric") {
    p.coordinate_mode = ResizeParams::CoordinateMode::kAsymmetric;
  } else if (coord == "tf_crop_and_resize") {
    p.coordinate_mode = ResizeParams::CoordinateMode::kTfCropAndResize;
    p.extrapolation_value = node.GetFloat("extrapolation_value", 0.0f);
  } else if (coord == "half_pixel_symmetric" || coord == "tf_half_pixel_for_nn") {
    return absl::UnimplementedError(absl::StrCat("Resize coordinate_transformation_mode '", coord,
                                                 "' is not supported (use half_pixel, pytorch_half_pixel, "
                                                 "align_corners, asymmetric or tf_crop_and_resize)"));
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown coordinate_transformation_mode '", coord, "'"));
  }
  const std::string nearest = node.GetString("nearest_mode", "round_prefer_floor");
  if (nearest == "round_prefer_floor") {
    p.nearest_mode = ResizeParams::NearestMode::kRoundPreferFloor;
  } else if (nearest == "round_prefer_ceil") {
    p.nearest_mode = ResizeParams::NearestMode::kRoundPreferCeil;
  } else if (nearest == "floor") {
    p.nearest_mode = ResizeParams::NearestMode::kFloor;
  } else if (nearest == "ceil") {
    p.nearest_mode = ResizeParams::NearestMode::kCeil;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown nearest_mode '", nearest, "' (expected round_prefer_floor, round_prefer_ceil, floor or ceil)"));
  }
  if (node.GetInt("antialias", 0) != 0) return absl::UnimplementedError("Resize with antialias=1 is not supported");
  const std::string policy = node.GetString("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown keep_aspect_ratio_policy '", policy, "' (expected stretch, not_larger or not_smaller)"));
  }
  if (has_scales == has_sizes) {
    return absl::InvalidArgumentError(has_scales ? "has both scales and sizes; give exactly one"
                                                 : "needs scales or sizes (neither is given)");
  }
  const int rank = static_cast<int>(x_dims.size());
  std::vector<int> axes;
  if (node.HasAttr("axes")) {
    absl::StatusOr<std::vector<int>> a = NormalizeAxes(node.GetInts("axes"), rank, "axis");
    if (!a.ok()) return a.status();
    axes = *a;
  } else {
    for (int i = 0; i < rank; ++i) axes.push_back(i);
  }
  p.output.assign(x_dims.begin(), x_dims.end());
  p.scales.assign(rank, 1.0);
  p.roi_start.assign(rank, 0.0);
  p.roi_end.assign(rank, 1.0);
  const bool crop = p.coordinate_mode == ResizeParams::CoordinateMode::kTfCropAndResize;
  if (crop && roi != nullptr) {
    if (roi->num_elements() != 2 * static_cast<int64_t>(axes.size())) {
      return absl::InvalidArgumentError(absl::StrCat("roi has ", roi->num_elements(), " values, expected ",
                                                     2 * axes.size(), " (a start and an end per resized axis)"));
    }
    for (size_t j = 0; j < axes.size(); ++j) {
      p.roi_start[axes[j]] = roi->GetAsDouble(j);
      p.roi_end[axes[j]] = roi->GetAsDouble(j + axes.size());
    }
  }
  const Tensor* given = has_scales ? scales : sizes;
  if (given == nullptr) {
    for (int a : axes) p.output[a] = UnknownDim();
    return p;
  }
  if (given->num_elements() != static_cast<int64_t>(axes.size())) {
    return absl::InvalidArgumentError(absl::StrCat(has_scales ? "scales" : "sizes", " has ", given->num_elements(),
                                                   " values, expected ", axes.size(), " (one per resized axis)"));
  }
  if (has_scales) {
    for (size_t j = 0; j < axes.size(); ++j) {
      const int a = axes[j];
      const float s = static_cast<float>(given->GetAsDouble(j));
      if (!(s > 0)) return absl::InvalidArgumentError(absl::StrCat("scales[", j, "] = ", s, " must be positive"));
      p.scales[a] = s;
      if (crop && roi == nullptr) {
        p.output[a] = UnknownDim();  // the crop's extent scales the output
      } else if (x_dims[a].is_static()) {
        // Single-precision product, as ONNX Runtime computes it: floor(7 * 0.7f) is 7 here but 6 in double.
        const float extent = crop ? static_cast<float>(p.roi_end[a] - p.roi_start[a]) : 1.0f;
        p.output[a] = static_cast<int64_t>(std::floor(static_cast<float>(x_dims[a].value()) * extent * s));
      } else if (s != 1.0f || crop) {
        p.output[a] = UnknownDim();
      }
    }
    return p;
  }
  std::vector<int64_t> sz = given->ToInt64Vector();
  for (size_t j = 0; j < sz.size(); ++j) {
    if (sz[j] < 0) return absl::InvalidArgumentError(absl::StrCat("sizes[", j, "] = ", sz[j], " is negative"));
  }
  if (policy != "stretch") {
    // One scale for every resized axis, the largest (not_larger) or smallest (not_smaller) that fits.
    double scale = policy == "not_larger" ? std::numeric_limits<double>::infinity() : 0.0;
    for (size_t j = 0; j < axes.size(); ++j) {
      const Dim& in = x_dims[axes[j]];
      if (!in.is_static()) {
        for (int a : axes) p.output[a] = UnknownDim();
        return p;
      }
      if (in.value() == 0) return absl::InvalidArgumentError("cannot keep the aspect ratio of an empty input");
      const double r = static_cast<double>(sz[j]) / in.value();
      scale = policy == "not_larger" ? std::min(scale, r) : std::max(scale, r);
    }
    for (size_t j = 0; j < axes.size(); ++j) sz[j] = std::llround(scale * x_dims[axes[j]].value());
  }
  for (size_t j = 0; j < axes.size(); ++j) {
    const int a = axes[j];
    p.output[a] = sz[j];
    if (x_dims[a].is_static() && x_dims[a].value() > 0) {
      p.scales[a] = static_cast<double>(sz[j]) / x_dims[a].value();
    }
  }
  return p;
}

}  // namespace tessel
