// Expansion fusion: the 1x1 convolution feeding a channels-last tessel.DwPwConv joins it.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "passes/fuse_depthwise_pointwise/fuse_depthwise_pointwise.h"
#include "passes/utils/pass_utils.h"

namespace tessel {
namespace {

// Why the channels-last FusedConv `exp` cannot become the expansion of `dwpw`; "" when it can.
std::string ExpansionBlocker(const Graph& graph, const Node* exp) {
  const Value* w = exp->input(1);
  if (w == nullptr || !w->type().is_static()) return "its weight shape is not static";
  const std::vector<int64_t> ws = w->type().StaticShape();  // [M, kh, kw, C] channels-last
  if (ws.size() != 4 || ws[1] != 1 || ws[2] != 1) return "kernel is not 1x1";
  if (exp->GetInt("group", 1) != 1) return "it is grouped";
  if (!AllEqual(exp->GetInts("strides"), 1) || !AllEqual(exp->GetInts("pads"), 0) ||
      !AllEqual(exp->GetInts("dilations"), 1) || exp->GetString("auto_pad", "NOTSET") != "NOTSET") {
    return "it has strides, padding or dilation";
  }
  if (exp->input(3) != nullptr) return "it adds a residual";
  const std::string act = exp->GetString("activation", "none");
  if (act != "none" && act != "relu" && act != "clip") return absl::StrCat("its activation ", act, " is not a clamp");
  const int users = NumUsers(graph, exp->output(0));
  if (users != 1) return absl::StrCat("output has ", users, " users");
  return "";
}

class FuseExpansionPass : public Pass {
 public:
  explicit FuseExpansionPass(int64_t min_bytes) : min_bytes_(min_bytes) {}

  absl::Status Run(Graph& graph, PassContext& ctx) override {
    absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
    if (!order.ok()) return order.status();
    for (Node* dwpw : *order) {
      if (dwpw->domain() != kTesselDomain || dwpw->op_type() != "DwPwConv") continue;
      if (dwpw->GetString("layout", "nchw") != "nhwc" || dwpw->input(6) != nullptr) continue;
      Node* exp = dwpw->input(0)->producer();
      if (exp == nullptr || exp->domain() != kTesselDomain || exp->op_type() != "FusedConv" ||
          exp->GetString("layout", "nchw") != "nhwc") {
        continue;
      }
      std::string reason = ExpansionBlocker(graph, exp);
      const TensorType& t = exp->output(0)->type();
      if (reason.empty() && t.is_static()) {
        const int64_t bytes = t.NumElements() * 4;
        if (bytes < min_bytes_) reason = absl::StrCat("its output (", bytes, " bytes) is below min-bytes ", min_bytes_);
      }
      if (!reason.empty()) {
        if (ctx.explain()) ctx.Explain(absl::StrCat(exp->name(), " not fused into ", dwpw->DebugName(), ": ", reason));
        continue;
      }
      absl::Status s = Fuse(graph, exp, dwpw);
      if (!s.ok()) return s;
      ++ctx.stat("expansions-fused");
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Fuse(Graph& graph, Node* exp, Node* dwpw) {
    std::vector<Value*> inputs = {exp->input(0)};
    for (int i = 1; i < 6; ++i) inputs.push_back(dwpw->input(i));
    inputs.push_back(exp->input(1));
    inputs.push_back(exp->input(2));
    while (inputs.back() == nullptr) inputs.pop_back();
    Node* fused = graph.AddNode("DwPwConv", inputs, 1, dwpw->name());
    fused->set_domain(kTesselDomain);
    for (const auto& [k, v] : dwpw->attributes()) fused->SetAttr(k, v);
    for (const char* k : {"activation", "clip_min", "clip_max"}) {
      if (const Attribute* a = exp->FindAttr(k)) fused->SetAttr(absl::StrCat("exp_", k), *a);
    }
    absl::Status s = InferNodeTypes(fused);
    if (!s.ok()) return s;
    Value* out = dwpw->output(0);
    const std::string name = out->name();
    graph.ReplaceAllUsesWith(out, fused->output(0));
    for (Node* d : {dwpw, exp}) {
      s = graph.EraseNode(d);
      if (!s.ok()) return s;
    }
    return graph.RenameValue(fused->output(0), name);
  }

  int64_t min_bytes_;
};

}  // namespace

PassInfo FuseExpansionPassInfo() {
  PassInfo info;
  info.name = "fuse-expansion";
  info.summary = "fold the 1x1 expansion convolution feeding a channels-last tessel.DwPwConv into it (runs after layout)";
  // Per-operator medians on MobileNetV2 (Zen 5, 1 thread, quiet host): the 112x112x96 block (4.8 MB
  // expanded) 0.54 -> 0.46 ms fused, and far more when other processes contend for L3 (0.82 -> 0.51);
  // the 56x56x144 blocks (1.8 MB, which L3 still holds between the two operators) 0.33 -> 0.40 and
  // 0.18 -> 0.21 ms: the fused kernel's per-band expansion GEMMs lose to one large GEMM there.
  info.options = {{"min-bytes", "fuse only expansions whose output has at least this many bytes", "2097152"}};
  info.create = [](const PassOptions& options) -> absl::StatusOr<std::unique_ptr<Pass>> {
    absl::StatusOr<int64_t> min_bytes = options.GetInt("min-bytes", 2 << 20);
    if (!min_bytes.ok()) return min_bytes.status();
    return std::unique_ptr<Pass>(new FuseExpansionPass(*min_bytes));
  };
  return info;
}

}  // namespace tessel
