#include "passes/utils/rewrite.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "passes/utils/pass_utils.h"

namespace tessel {

bool IsOp(const Node* n, const char* op) { return n != nullptr && n->domain().empty() && n->op_type() == op; }

Node* SoleUser(const Graph& g, const Value* v) {
  return NumUsers(g, v) == 1 && !v->uses().empty() ? v->uses()[0].node : nullptr;
}

Value* OtherInput(const Node* n, const Value* v) {
  if (n == nullptr || n->num_inputs() != 2) return nullptr;
  if (n->input(0) == v) return n->input(1);
  if (n->input(1) == v) return n->input(0);
  return nullptr;
}

int TrailingReducedAxes(const Node* rm) {
  const int rank = rm->input(0)->type().rank();
  if (rm->GetInt("keepdims", 1) != 1 || rank == 0) return 0;
  const Value* axes = rm->input(1);
  if (axes == nullptr || (axes->is_constant() && axes->constant()->num_elements() == 0)) {
    return rm->GetInt("noop_with_empty_axes", 0) != 0 ? 0 : rank;
  }
  if (!axes->is_constant()) return 0;
  std::vector<bool> reduced(rank, false);
  const Tensor& a = *axes->constant();
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    int64_t ax = a.GetAsInt64(i);
    if (ax < -rank || ax >= rank) return 0;
    if (ax < 0) ax += rank;
    if (reduced[ax]) return 0;
    reduced[ax] = true;
  }
  const int k = static_cast<int>(a.num_elements());
  for (int i = rank - k; i < rank; ++i) {
    if (!reduced[i]) return 0;
  }
  return k;
}

ParamFit FitParam(const Value* v, const std::vector<Dim>& normalized, DType dtype) {
  const TensorType& t = v->type();
  if (t.dtype != dtype) return ParamFit::kNo;
  const size_t extra = t.dims.size() > normalized.size() ? t.dims.size() - normalized.size() : 0;
  for (size_t i = 0; i < t.dims.size(); ++i) {
    const Dim& d = t.dims[i];
    const bool one = d.is_static() && d.value() == 1;
    if (i < extra) {
      if (!one) return ParamFit::kNo;
    } else if (!one && d != normalized[normalized.size() - (t.dims.size() - i)]) {
      return ParamFit::kNo;
    }
  }
  if (extra == 0) return ParamFit::kAsIs;
  return v->is_constant() ? ParamFit::kReshape : ParamFit::kNo;
}

absl::StatusOr<Value*> ApplyFit(Graph& g, Value* v, ParamFit fit, size_t rank) {
  if (fit == ParamFit::kAsIs) return v;
  const std::vector<int64_t>& shape = v->constant()->shape();
  absl::StatusOr<Tensor> t = v->constant()->Reshaped(std::vector<int64_t>(shape.end() - rank, shape.end()));
  if (!t.ok()) return t.status();
  return g.AddConstant(v->name(), std::move(*t));
}

absl::Status FinishRewrites(Graph& g, const std::vector<Node*>& dead,
                            const std::vector<std::pair<Value*, std::string>>& renames) {
  std::set<Node*> left(dead.begin(), dead.end());
  for (bool progress = true; progress && !left.empty();) {
    progress = false;
    for (auto it = left.begin(); it != left.end();) {
      bool unused = true;
      for (Value* o : (*it)->outputs()) unused &= o->uses().empty() && !g.IsGraphOutput(o);
      if (!unused) {
        ++it;
        continue;
      }
      absl::Status s = g.EraseNode(*it);
      if (!s.ok()) return s;
      it = left.erase(it);
      progress = true;
    }
  }
  if (!left.empty())
    return absl::InternalError(absl::StrCat((*left.begin())->DebugName(), " was fused but is still used"));
  for (const auto& [v, name] : renames) {
    absl::Status s = g.RenameValue(v, name);
    if (!s.ok()) return s;
  }
  // Constants only the fused patterns read (the square's exponent, epsilon, ...).
  if (!dead.empty()) g.RemoveUnusedConstants();
  return absl::OkStatus();
}

}  // namespace tessel
