// Rotary position embedding fusion.
#include "passes/fuse_rope/fuse_rope.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/shape_util.h"
#include "passes/utils/pass_utils.h"
#include "passes/utils/rewrite.h"

namespace tessel {
namespace {

// The single element of a constant one-element integer input, when it is one.
bool ConstantInt(const Value* v, int64_t* out) {
  if (v == nullptr || !v->is_constant() || v->constant()->num_elements() != 1 || IsFloat(v->type().dtype)) return false;
  *out = v->constant()->GetAsInt64(0);
  return true;
}

// For a Slice of one step along the last axis only, the first element it takes and how many.
bool LastAxisSlice(const Node* s, int64_t* start, int64_t* length) {
  if (!IsOp(s, "Slice")) return false;
  const TensorType& t = s->input(0)->type();
  const int rank = t.rank();
  if (rank == 0 || !t.dims.back().is_static()) return false;
  // Without axes, Slice cuts axes 0, 1, ...: the last axis only for rank 1.
  int64_t begin = 0, end = 0, axis = 0, step = 1;
  if (!ConstantInt(s->input(1), &begin) || !ConstantInt(s->input(2), &end)) return false;
  if (s->input(3) != nullptr && !ConstantInt(s->input(3), &axis)) return false;
  if (s->input(4) != nullptr && !ConstantInt(s->input(4), &step)) return false;
  if ((axis != rank - 1 && axis != -1) || step != 1) return false;
  const SliceRange r = ClampSlice(t.dims.back().value(), begin, end, step);
  *start = r.start;
  *length = r.length;
  return true;
}

// When `rot` is rotate_half(x) = Concat(Neg(x[..., D/2:]), x[..., :D/2]) along the last axis, returns x
// and appends the nodes computing it to `nodes`; nullptr otherwise.
Value* RotateHalfOf(const Value* rot, std::vector<Node*>* nodes) {
  Node* cat = rot->producer();
  if (!IsOp(cat, "Concat") || cat->num_inputs() != 2) return nullptr;
  const int rank = rot->type().rank();
  const int64_t axis = cat->GetInt("axis", 0);
  if (rank == 0 || (axis != rank - 1 && axis != -1)) return nullptr;
  Node* neg = cat->input(0)->producer();
  Node* lo = cat->input(1)->producer();
  Node* hi = IsOp(neg, "Neg") ? neg->input(0)->producer() : nullptr;
  if (hi == nullptr || !IsOp(lo, "Slice") || !IsOp(hi, "Slice") || hi->input(0) != lo->input(0)) return nullptr;
  Value* x = lo->input(0);
  const Dim d = x->type().dims.empty() ? Dim(0) : x->type().dims.back();
  int64_t hi_start = 0, hi_len = 0, lo_start = 0, lo_len = 0;
  if (!d.is_static() || d.value() % 2 != 0 || d.value() == 0 || !LastAxisSlice(hi, &hi_start, &hi_len) ||
      !LastAxisSlice(lo, &lo_start, &lo_len)) {
    return nullptr;
  }
  const int64_t half = d.value() / 2;
  if (hi_start != half || hi_len != half || lo_start != 0 || lo_len != half) return nullptr;
  nodes->insert(nodes->end(), {hi, neg, lo, cat});
  return x;
}

// cos and sin must broadcast to x without changing its shape.
bool BroadcastsTo(const TensorType& from, const TensorType& to) {
  if (from.dtype != to.dtype || from.rank() > to.rank()) return false;
  for (int k = 1; k <= from.rank(); ++k) {
    const Dim& f = from.dims[from.rank() - k];
    if (!(f.is_static() && f.value() == 1) && f != to.dims[to.rank() - k]) return false;
  }
  return true;
}

struct RopeMatch {
  Value* x = nullptr;
  Value* cos = nullptr;
  Value* sin = nullptr;
  std::vector<Node*> nodes;
};

// Matches x * cos + rotate_half(x) * sin at its Add (operands in either order). Returns false with `why`
// empty when no operand is a product with rotate_half, or with the reason the rest does not fit.
bool MatchRope(const Graph& g, Node* add, RopeMatch* m, std::string* why) {
  if (!IsOp(add, "Add") || add->num_inputs() != 2) return false;
  for (int side = 0; side < 2; ++side) {
    Node* rot_mul = add->input(1 - side)->producer();
    Node* x_mul = add->input(side)->producer();
    if (!IsOp(rot_mul, "Mul") || rot_mul->num_inputs() != 2) continue;
    for (int i = 0; i < 2; ++i) {
      std::vector<Node*> rot_nodes;
      Value* x = RotateHalfOf(rot_mul->input(i), &rot_nodes);
      if (x == nullptr) continue;
      // rotate_half(x) is recognised: from here on, say why a mismatch declines.
      Value* cos = IsOp(x_mul, "Mul") ? OtherInput(x_mul, x) : nullptr;
      if (cos == nullptr) {
        *why = absl::StrCat("the other term of the sum is not x ('", x->name(), "') times cos");
        return false;
      }
      Value* sin = rot_mul->input(1 - i);
      for (Node* n : rot_nodes) {
        if (SoleUser(g, n->output(0)) == nullptr) {
          *why = absl::StrCat("rotate_half's ", n->DebugName(), " has other users");
          return false;
        }
      }
      if (SoleUser(g, x_mul->output(0)) != add || SoleUser(g, rot_mul->output(0)) != add) {
        *why = "x * cos or rotate_half(x) * sin has other users";
        return false;
      }
      const TensorType& xt = x->type();
      if (!IsFloat(xt.dtype) || !BroadcastsTo(cos->type(), xt) || !BroadcastsTo(sin->type(), xt) ||
          add->output(0)->type() != xt) {
        *why = absl::StrCat("cos (", cos->type().ToString(), ") or sin (", sin->type().ToString(),
                            ") does not broadcast to x (", xt.ToString(), ")");
        return false;
      }
      m->x = x;
      m->cos = cos;
      m->sin = sin;
      m->nodes = std::move(rot_nodes);
      m->nodes.insert(m->nodes.end(), {x_mul, rot_mul, add});
      return true;
    }
  }
  return false;
}

class FuseRopePass : public Pass {
 public:
  absl::Status Run(Graph& graph, PassContext& ctx) override {
    absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
    if (!order.ok()) return order.status();
    // Matched nodes are only rewired here; erasing them after the scan keeps `order` valid.
    std::vector<Node*> dead;
    std::vector<std::pair<Value*, std::string>> renames;
    for (Node* add : *order) {
      RopeMatch m;
      std::string why;
      if (!MatchRope(graph, add, &m, &why)) {
        if (!why.empty()) ctx.Explain(absl::StrCat(add->name(), " not fused: ", why));
        continue;
      }
      Value* result = add->output(0);
      Node* fused = graph.AddNode("Rope", {m.x, m.cos, m.sin}, 1, add->name(), {result->name()});
      fused->set_domain(kTesselDomain);
      fused->SetAttr("style", Attribute::String("half"));
      fused->output(0)->set_type(result->type());
      renames.push_back({fused->output(0), result->name()});
      graph.ReplaceAllUsesWith(result, fused->output(0));
      dead.insert(dead.end(), m.nodes.begin(), m.nodes.end());
      ++ctx.stat("ropes-fused");
    }
    return FinishRewrites(graph, dead, renames);
  }
};

}  // namespace

PassInfo FuseRopePassInfo() {
  return SimplePassInfo<FuseRopePass>(
      "fuse-rope", "x * cos + rotate_half(x) * sin (rotary position embedding) becomes one tessel.Rope");
}

}  // namespace tessel
