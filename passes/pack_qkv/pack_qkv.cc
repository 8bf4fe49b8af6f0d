// Packing of MatMuls that share their input.
#include "passes/pack_qkv/pack_qkv.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tessel {
namespace {

bool IsMatMul(const Node* n) { return n->domain().empty() && n->op_type() == "MatMul"; }

// A weight the packed MatMul can take a slice of: constant, 2-D, whole bytes per element, same dtype
// as the shared input.
bool PackableWeight(const Value* x, const Value* w) {
  return w != x && w->is_constant() && w->constant()->rank() == 2 && w->type().dtype == x->type().dtype &&
         DTypeBits(w->type().dtype) % 8 == 0;
}

class PackQkvPass : public Pass {
 public:
  absl::Status Run(Graph& graph, PassContext& ctx) override {
    absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
    if (!order.ok()) return order.status();
    std::unordered_map<const Node*, size_t> position;
    std::vector<Value*> shared = graph.inputs();
    for (size_t i = 0; i < order->size(); ++i) {
      position[(*order)[i]] = i;
      for (Value* o : (*order)[i]->outputs()) shared.push_back(o);
    }
    // The replaced MatMuls are erased after the scan, so that the values listed above stay valid.
    std::vector<Node*> dead;
    std::vector<std::pair<Value*, std::string>> renames;
    for (Value* x : shared) {
      std::vector<Node*> matmuls;
      for (const Use& u : x->uses()) {
        if (IsMatMul(u.node) && u.input_index == 0) matmuls.push_back(u.node);
      }
      if (matmuls.size() < 2) continue;
      std::vector<Node*> group;
      for (Node* m : matmuls) {
        if (PackableWeight(x, m->input(1))) {
          group.push_back(m);
        } else {
          ctx.Explain(absl::StrCat(m->name(), " not packed with other MatMuls of '", x->name(),
                                   "': its weight is not a constant 2-D tensor of the input's dtype"));
        }
      }
      if (group.size() < 2) continue;
      std::sort(group.begin(), group.end(), [&](const Node* a, const Node* b) { return position[a] < position[b]; });
      const int64_t rows = group[0]->input(1)->constant()->dim(0);
      bool same_rows = true;
      for (const Node* m : group) same_rows &= m->input(1)->constant()->dim(0) == rows;
      if (!same_rows) {
        ctx.Explain(absl::StrCat("MatMuls of '", x->name(), "' not packed: their weights have different row counts"));
        continue;
      }
      Pack(graph, x, group, &dead, &renames);
      ctx.stat("matmuls-packed") += static_cast<int64_t>(group.size());
      ++ctx.stat("groups-packed");
    }
    for (Node* n : dead) {
      absl::Status s = graph.EraseNode(n);
      if (!s.ok()) return s;
    }
    for (const auto& [v, name] : renames) {
      absl::Status s = graph.RenameValue(v, name);
      if (!s.ok()) return s;
    }
    // The separate weights, unless something else reads them.
    if (!dead.empty()) graph.RemoveUnusedConstants();
    return absl::OkStatus();
  }

 private:
  // One MatMul with the weights side by side ([K, N1 + N2 + ...]) and a Split of its last axis into the
  // original results. Each output column is the same dot product as before, so results are identical.
  static void Pack(Graph& graph, Value* x, const std::vector<Node*>& group, std::vector<Node*>* dead,
                   std::vector<std::pair<Value*, std::string>>* renames) {
    const int64_t rows = group[0]->input(1)->constant()->dim(0);
    const DType dtype = x->type().dtype;
    const size_t elem = DTypeBits(dtype) / 8;
    std::vector<int64_t> widths;
    std::vector<std::string> names;
    int64_t total = 0;
    for (const Node* m : group) {
      widths.push_back(m->input(1)->constant()->dim(1));
      names.push_back(m->name());
      total += widths.back();
    }
    Tensor packed(dtype, {rows, total});
    char* dst = static_cast<char*>(packed.raw_data());
    for (int64_t r = 0; r < rows; ++r) {
      int64_t col = 0;
      for (size_t i = 0; i < group.size(); ++i) {
        const char* src = static_cast<const char*>(group[i]->input(1)->constant()->raw_data());
        std::memcpy(dst + (r * total + col) * elem, src + r * widths[i] * elem, widths[i] * elem);
        col += widths[i];
      }
    }
    Value* w = graph.AddConstant(absl::StrCat(group[0]->input(1)->name(), ".packed"), std::move(packed));
    const std::string name = absl::StrJoin(names, "+");
    Node* matmul = graph.AddNode("MatMul", {x, w}, 1, name, {absl::StrCat(group[0]->output(0)->name(), ".packed")});
    TensorType packed_type = group[0]->output(0)->type();
    packed_type.dims.back() = total;
    matmul->output(0)->set_type(packed_type);
    Value* sizes = graph.AddConstant(absl::StrCat(matmul->output(0)->name(), ".sizes"),
                                     Tensor::FromVector<int64_t>({static_cast<int64_t>(widths.size())}, widths));
    Node* split = graph.AddNode("Split", {matmul->output(0), sizes}, static_cast<int>(group.size()),
                                absl::StrCat(name, ".split"));
    split->SetAttr("axis", Attribute::Int(-1));
    for (size_t i = 0; i < group.size(); ++i) {
      Value* old = group[i]->output(0);
      split->output(i)->set_type(old->type());
      graph.ReplaceAllUsesWith(old, split->output(i));
      renames->push_back({split->output(i), old->name()});
      dead->push_back(group[i]);
    }
  }
};

}  // namespace

PassInfo PackQkvPassInfo() {
  return SimplePassInfo<PackQkvPass>(
      "pack-qkv", "MatMuls with constant weights sharing one input (Q/K/V projections) become one MatMul and a Split");
}

}  // namespace tessel
