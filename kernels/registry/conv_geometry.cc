// Channels-last geometry decoding on top of the ONNX attribute resolution in graph/ops/nn_params.h.
#include "kernels/registry/conv_geometry.h"

#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/ops/nn_params.h"

namespace tessel {
namespace {

// [N, H, W, C] (or [M, KH, KW, C/g]) -> [N, C, H, W].
std::vector<Dim> ChannelsFirst(const TensorType& t) { return {t.dims[0], t.dims[3], t.dims[1], t.dims[2]}; }

absl::Status CheckNhwc4d(const Node& node, const TensorType& x) {
  if (node.GetString("layout", "nchw") != "nhwc") {
    return absl::InvalidArgumentError(absl::StrCat("node '", node.name(), "' is not channels-last"));
  }
  if (x.rank() != 4 || !x.is_static()) {
    return absl::InvalidArgumentError(
        absl::StrCat("node '", node.name(), "': expected a static 4-D input, got ", x.ToString()));
  }
  return absl::OkStatus();
}

void CopyWindow(const WindowParams& p, Conv2dGeometry* g) {
  g->kh = p.kernel[0];
  g->kw = p.kernel[1];
  g->sh = p.strides[0];
  g->sw = p.strides[1];
  g->dh = p.dilations[0];
  g->dw = p.dilations[1];
  g->pad_top = p.pads_begin[0];
  g->pad_left = p.pads_begin[1];
  g->pad_bottom = p.pads_end[0];
  g->pad_right = p.pads_end[1];
  g->oh = p.output[0].value();
  g->ow = p.output[1].value();
}

}  // namespace

ClampActivation ReadClampActivation(const Node& node, const std::string& prefix) {
  const std::string kind = node.GetString(prefix + "activation", "none");
  ClampActivation a;
  a.lo = -std::numeric_limits<float>::infinity();
  a.hi = std::numeric_limits<float>::infinity();
  if (kind == "relu") {
    a.lo = 0.0f;
  } else if (kind == "clip") {
    a.lo = node.GetFloat(prefix + "clip_min", a.lo);
    a.hi = node.GetFloat(prefix + "clip_max", a.hi);
  } else if (kind != "none") {
    a.is_clamp = false;
  }
  return a;
}

absl::StatusOr<Conv2dGeometry> ResolveConv2dNhwc(const Node& node, const TensorType& x, const TensorType& w) {
  absl::Status s = CheckNhwc4d(node, x);
  if (!s.ok()) return s;
  if (w.rank() != 4 || !w.is_static()) {
    return absl::InvalidArgumentError(absl::StrCat("node '", node.name(), "': expected static 4-D weights"));
  }
  absl::StatusOr<ConvParams> p = ResolveConvParams(node, ChannelsFirst(x), ChannelsFirst(w));
  if (!p.ok()) return p.status();
  Conv2dGeometry g;
  g.n = x.dims[0].value();
  g.h = x.dims[1].value();
  g.w = x.dims[2].value();
  g.c = x.dims[3].value();
  g.m = w.dims[0].value();
  g.groups = p->group;
  CopyWindow(*p, &g);
  return g;
}

absl::StatusOr<Conv2dGeometry> ResolvePool2dNhwc(const Node& node, const TensorType& x) {
  absl::Status s = CheckNhwc4d(node, x);
  if (!s.ok()) return s;
  absl::StatusOr<PoolParams> p = ResolvePoolParams(node, ChannelsFirst(x));
  if (!p.ok()) return p.status();
  if (p->ceil_mode) return absl::InvalidArgumentError(absl::StrCat("node '", node.name(), "': ceil_mode"));
  Conv2dGeometry g;
  g.n = x.dims[0].value();
  g.h = x.dims[1].value();
  g.w = x.dims[2].value();
  g.c = g.m = x.dims[3].value();
  CopyWindow(*p, &g);
  return g;
}

}  // namespace tessel
