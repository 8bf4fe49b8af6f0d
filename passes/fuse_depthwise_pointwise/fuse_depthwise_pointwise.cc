// Depthwise + pointwise convolution fusion.
#include "passes/fuse_depthwise_pointwise/fuse_depthwise_pointwise.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "passes/utils/pass_utils.h"

namespace tessel {
namespace {

bool IsConv(const Node* n) {
  return n != nullptr && ((n->domain().empty() && n->op_type() == "Conv") ||
                          (n->domain() == kTesselDomain && n->op_type() == "FusedConv"));
}

// The weight's static shape, or empty when unknown.
std::vector<int64_t> WeightShape(const Node* conv) {
  const Value* w = conv->input(1);
  return w != nullptr && w->type().is_static() ? w->type().StaticShape() : std::vector<int64_t>();
}

// Why `pw` is not a plain 1x1 convolution; "" when it is.
std::string PointwiseBlocker(const Node* pw) {
  const std::vector<int64_t> w = WeightShape(pw);
  if (w.size() != 4 || w[2] != 1 || w[3] != 1) return "kernel is not 1x1";
  if (pw->GetInt("group", 1) != 1) return "it is grouped";
  if (!AllEqual(pw->GetInts("strides"), 1) || !AllEqual(pw->GetInts("pads"), 0) ||
      pw->GetString("auto_pad", "NOTSET") != "NOTSET") {
    return "it has strides or padding";
  }
  return "";
}

bool IsDepthwise(const Node* dw) {
  const std::vector<int64_t> w = WeightShape(dw);
  const TensorType& x = dw->input(0)->type();
  if (w.size() != 4 || x.rank() != 4 || !x.dims[1].is_static()) return false;
  const int64_t c = x.dims[1].value();
  return c > 1 && dw->GetInt("group", 1) == c && w[0] == c && w[1] == 1;
}

// Why the depthwise `dw` cannot be fused into its reader; "" when it can.
std::string DepthwiseBlocker(const Graph& graph, const Node* dw) {
  const std::vector<int64_t> w = WeightShape(dw);
  if (w[2] != 3 || w[3] != 3) return absl::StrCat("kernel is ", w[2], "x", w[3], ", not 3x3");
  if (dw->input(3) != nullptr) return "it adds a residual";
  const int users = NumUsers(graph, dw->output(0));
  if (users != 1) return absl::StrCat("output has ", users, " users");
  return "";
}

class FuseDepthwisePointwisePass : public Pass {
 public:
  absl::Status Run(Graph& graph, PassContext& ctx) override {
    absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
    if (!order.ok()) return order.status();
    // Anchored at the pointwise convolution; a rewrite erases it and its producer.
    for (Node* pw : *order) {
      if (!IsConv(pw)) continue;
      Node* dw = pw->input(0)->producer();
      if (!IsConv(dw)) continue;
      std::string reason;
      if (pw->GetString("layout", "nchw") != "nchw" || dw->GetString("layout", "nchw") != "nchw") {
        // Channels-last weights are laid out differently; this pass runs before layout.
        continue;
      }
      if (!IsDepthwise(dw)) continue;
      if (std::string r = PointwiseBlocker(pw); !r.empty()) {
        reason = absl::StrCat(pw->name(), " is not pointwise: ", r);
      } else {
        reason = DepthwiseBlocker(graph, dw);
      }
      if (!reason.empty()) {
        if (ctx.explain()) ctx.Explain(absl::StrCat(dw->name(), " not fused with ", pw->DebugName(), ": ", reason));
        continue;
      }
      absl::Status s = Fuse(graph, dw, pw);
      if (!s.ok()) return s;
      ++ctx.stat("blocks-fused");
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Fuse(Graph& graph, Node* dw, Node* pw) {
    std::vector<Value*> inputs = {dw->input(0), dw->input(1), dw->input(2), pw->input(1), pw->input(2), pw->input(3)};
    while (inputs.back() == nullptr) inputs.pop_back();
    Node* fused = graph.AddNode("DwPwConv", inputs, 1, pw->name());
    fused->set_domain(kTesselDomain);
    // The depthwise geometry keeps the Conv attribute names; activations get dw_ / pw_ prefixes.
    for (const auto& [k, v] : dw->attributes()) {
      const bool act = k == "activation" || k == "clip_min" || k == "clip_max";
      fused->SetAttr(act ? "dw_" + k : k, v);
    }
    for (const char* k : {"activation", "clip_min", "clip_max"}) {
      if (const Attribute* a = pw->FindAttr(k)) fused->SetAttr(absl::StrCat("pw_", k), *a);
    }
    absl::Status s = InferNodeTypes(fused);
    if (!s.ok()) return s;
    Value* out = pw->output(0);
    const std::string name = out->name();
    graph.ReplaceAllUsesWith(out, fused->output(0));
    for (Node* d : {pw, dw}) {
      s = graph.EraseNode(d);
      if (!s.ok()) return s;
    }
    return graph.RenameValue(fused->output(0), name);
  }
};

}  // namespace

PassInfo FuseDepthwisePointwisePassInfo() {
  return SimplePassInfo<FuseDepthwisePointwisePass>(
      "fuse-depthwise-pointwise", "fuse a 3x3 depthwise conv and the 1x1 conv reading it into tessel.DwPwConv");
}

}  // namespace tessel
