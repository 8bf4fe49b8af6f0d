// Graph construction, mutation, ordering and verification.
#include "graph/graph.h"

#include "graph/op_registry.h"

#include <algorithm>
#include <queue>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace tessel {

Attribute Attribute::Int(int64_t v) {
  Attribute a;
  a.kind = Kind::kInt;
  a.i = v;
  return a;
}
Attribute Attribute::Float(float v) {
  Attribute a;
  a.kind = Kind::kFloat;
  a.f = v;
  return a;
}
Attribute Attribute::String(std::string v) {
  Attribute a;
  a.kind = Kind::kString;
  a.s = std::move(v);
  return a;
}
Attribute Attribute::Ints(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Kind::kInts;
  a.ints = std::move(v);
  return a;
}
Attribute Attribute::Floats(std::vector<float> v) {
  Attribute a;
  a.kind = Kind::kFloats;
  a.floats = std::move(v);
  return a;
}
Attribute Attribute::Strings(std::vector<std::string> v) {
  Attribute a;
  a.kind = Kind::kStrings;
  a.strings = std::move(v);
  return a;
}
Attribute Attribute::TensorValue(Tensor v) {
  Attribute a;
  a.kind = Kind::kTensor;
  a.t = std::make_shared<const Tensor>(std::move(v));
  return a;
}

Attribute Attribute::GraphValue(std::shared_ptr<const Graph> v) {
  Attribute a;
  a.kind = Kind::kGraph;
  a.g = std::move(v);
  return a;
}

bool Attribute::operator==(const Attribute& o) const {
  if (kind != o.kind) return false;
  switch (kind) {
    case Kind::kInt: return i == o.i;
    case Kind::kFloat: return f == o.f || (f != f && o.f != o.f);
    case Kind::kString: return s == o.s;
    case Kind::kInts: return ints == o.ints;
    case Kind::kFloats: return floats == o.floats;
    case Kind::kStrings: return strings == o.strings;
    case Kind::kTensor:
      if (!t || !o.t) return t == o.t;
      return t->dtype() == o.t->dtype() && t->shape() == o.t->shape() && t->byte_size() == o.t->byte_size() &&
             std::equal(static_cast<const char*>(t->raw_data()),
                        static_cast<const char*>(t->raw_data()) + t->byte_size(),
                        static_cast<const char*>(o.t->raw_data()));
    case Kind::kGraph: return g == o.g;  // the same subgraph (shared, never modified)
  }
  return false;
}

void Node::SetInput(int i, Value* v) {
  Value* old = inputs_[i];
  if (old != nullptr) {
    auto& uses = old->uses_;
    // Swap-and-pop: use order carries no meaning, and shared constants can have thousands of uses.
    auto it = std::find(uses.rbegin(), uses.rend(), Use{this, i});
    if (it != uses.rend()) {
      *it = uses.back();
      uses.pop_back();
    }
  }
  inputs_[i] = v;
  if (v != nullptr) v->uses_.push_back(Use{this, i});
}

void Node::AddInput(Value* v) {
  inputs_.push_back(nullptr);
  SetInput(num_inputs() - 1, v);
}

void Node::RemoveLastInput() {
  SetInput(num_inputs() - 1, nullptr);
  inputs_.pop_back();
}

const Attribute* Node::FindAttr(const std::string& k) const {
  auto it = attrs_.find(k);
  return it == attrs_.end() ? nullptr : &it->second;
}

int64_t Node::GetInt(const std::string& k, int64_t def) const {
  const Attribute* a = FindAttr(k);
  return (a && a->kind == Attribute::Kind::kInt) ? a->i : def;
}

float Node::GetFloat(const std::string& k, float def) const {
  const Attribute* a = FindAttr(k);
  if (a && a->kind == Attribute::Kind::kFloat) return a->f;
  if (a && a->kind == Attribute::Kind::kInt) return static_cast<float>(a->i);
  return def;
}

std::string Node::GetString(const std::string& k, const std::string& def) const {
  const Attribute* a = FindAttr(k);
  return (a && a->kind == Attribute::Kind::kString) ? a->s : def;
}

std::vector<int64_t> Node::GetInts(const std::string& k, std::vector<int64_t> def) const {
  const Attribute* a = FindAttr(k);
  return (a && a->kind == Attribute::Kind::kInts) ? a->ints : def;
}

std::vector<float> Node::GetFloats(const std::string& k, std::vector<float> def) const {
  const Attribute* a = FindAttr(k);
  return (a && a->kind == Attribute::Kind::kFloats) ? a->floats : def;
}

std::string Node::DebugName() const { return absl::StrCat(op_type_, " '", name_, "'"); }

Value* Graph::NewValue(std::string name) {
  if (name.empty() || value_by_name_.count(name)) name = UniqueValueName(name.empty() ? "v" : name);
  auto v = std::make_unique<Value>();
  v->id_ = next_value_id_++;
  v->name_ = name;
  Value* raw = v.get();
  values_.push_back(std::move(v));
  raw->self_ = std::prev(values_.end());
  value_by_name_[name] = raw;
  return raw;
}

std::string Graph::UniqueValueName(const std::string& prefix) {
  std::string n;
  do {
    n = absl::StrCat(prefix, "_", fresh_counter_++);
  } while (value_by_name_.count(n));
  return n;
}

std::string Graph::UniqueNodeName(const std::string& prefix) {
  absl::flat_hash_set<std::string> names;
  for (const auto& n : nodes_) names.insert(n->name());
  std::string n;
  do {
    n = absl::StrCat(prefix, "_", fresh_counter_++);
  } while (names.count(n));
  return n;
}

absl::Status Graph::RenameValue(Value* v, const std::string& name) {
  if (v->name_ == name) return absl::OkStatus();
  if (value_by_name_.count(name)) return absl::AlreadyExistsError(absl::StrCat("value name '", name, "' is taken"));
  value_by_name_.erase(v->name_);
  v->name_ = name;
  value_by_name_[name] = v;
  return absl::OkStatus();
}

Value* Graph::AddInput(std::string name, TensorType type) {
  Value* v = NewValue(std::move(name));
  v->type_ = std::move(type);
  v->is_graph_input_ = true;
  inputs_.push_back(v);
  return v;
}

Value* Graph::AddConstant(std::string name, std::shared_ptr<const Tensor> data) {
  Value* v = NewValue(std::move(name));
  v->type_ = data->type();
  v->constant_ = std::move(data);
  return v;
}

Value* Graph::AddConstant(std::string name, Tensor data) {
  return AddConstant(std::move(name), std::make_shared<const Tensor>(std::move(data)));
}

Node* Graph::AddNode(std::string op_type, std::vector<Value*> inputs, int num_outputs, std::string name,
                     std::vector<std::string> output_names) {
  auto n = std::make_unique<Node>();
  n->id_ = next_node_id_++;
  n->op_type_ = std::move(op_type);
  n->name_ = name.empty() ? absl::StrCat(n->op_type_, "_", n->id_) : std::move(name);
  Node* raw = n.get();
  nodes_.push_back(std::move(n));
  raw->self_ = std::prev(nodes_.end());
  for (Value* v : inputs) raw->AddInput(v);
  for (int i = 0; i < num_outputs; ++i) {
    std::string oname = i < static_cast<int>(output_names.size()) ? output_names[i] : "";
    if (oname.empty()) oname = num_outputs == 1 ? raw->name_ : absl::StrCat(raw->name_, ":", i);
    Value* v = NewValue(oname);
    v->producer_ = raw;
    v->producer_output_ = i;
    raw->outputs_.push_back(v);
  }
  return raw;
}

std::vector<Value*> Graph::Constants() const {
  std::vector<Value*> out;
  for (const auto& v : values_) {
    if (v->is_constant()) out.push_back(v.get());
  }
  return out;
}

Value* Graph::FindValue(const std::string& name) const {
  auto it = value_by_name_.find(name);
  return it == value_by_name_.end() ? nullptr : it->second;
}

Node* Graph::FindNode(const std::string& name) const {
  for (const auto& n : nodes_) {
    if (n->name() == name) return n.get();
  }
  return nullptr;
}

bool Graph::IsGraphOutput(const Value* v) const {
  return std::find(outputs_.begin(), outputs_.end(), v) != outputs_.end();
}

void Graph::ReplaceAllUsesWith(Value* from, Value* to) {
  if (from == to) return;
  std::vector<Use> uses = from->uses_;
  for (const Use& u : uses) u.node->SetInput(u.input_index, to);
  for (Value*& o : outputs_) {
    if (o == from) o = to;
  }
}

absl::Status Graph::EraseNode(Node* n) {
  for (Value* o : n->outputs_) {
    if (!o->uses_.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot erase ", n->DebugName(), ": output '", o->name_, "' still has ", o->uses_.size(), " use(s)"));
    }
    if (IsGraphOutput(o)) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot erase ", n->DebugName(), ": output '", o->name_, "' is a graph output"));
    }
  }
  for (int i = 0; i < n->num_inputs(); ++i) n->SetInput(i, nullptr);
  for (Value* o : n->outputs_) {
    value_by_name_.erase(o->name_);
    values_.erase(o->self_);
  }
  nodes_.erase(n->self_);
  return absl::OkStatus();
}

int Graph::RemoveUnusedConstants() {
  int removed = 0;
  for (auto it = values_.begin(); it != values_.end();) {
    Value* v = it->get();
    if (v->is_constant() && v->uses_.empty() && !IsGraphOutput(v)) {
      value_by_name_.erase(v->name_);
      it = values_.erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  return removed;
}

absl::StatusOr<std::vector<Node*>> Graph::TopologicalOrder() const {
  // Indexed by Node::id_ (dense, never reused): plain vectors instead of hash maps keep this linear
  // and cache-friendly on 100k-node graphs.
  std::vector<int> pending(next_node_id_, 0);
  std::vector<int> position(next_node_id_, -1);
  std::vector<Node*> order;
  order.reserve(nodes_.size());
  int pos = 0;
  bool sorted = true;
  for (const auto& n : nodes_) {
    int deps = 0;
    for (Value* in : n->inputs_) {
      if (in == nullptr || in->producer_ == nullptr) continue;
      ++deps;
      // A producer not yet seen means the list is out of order (or cyclic).
      if (position[in->producer_->id_] < 0) sorted = false;
    }
    pending[n->id_] = deps;
    position[n->id_] = pos++;
  }
  // Fast path: the node list is usually already in order (importers and passes keep it so).
  if (sorted) {
    for (const auto& n : nodes_) order.push_back(n.get());
    return order;
  }
  // Min-heap on insertion position keeps the order stable.
  auto cmp = [&](Node* a, Node* b) { return position[a->id_] > position[b->id_]; };
  std::priority_queue<Node*, std::vector<Node*>, decltype(cmp)> ready(cmp);
  for (const auto& n : nodes_) {
    if (pending[n->id_] == 0) ready.push(n.get());
  }
  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    order.push_back(n);
    for (Value* o : n->outputs_) {
      for (const Use& u : o->uses_) {
        if (--pending[u.node->id_] == 0) ready.push(u.node);
      }
    }
  }
  if (order.size() != nodes_.size()) {
    for (const auto& n : nodes_) {
      if (pending[n->id_] > 0) {
        return absl::FailedPreconditionError(
            absl::StrCat("graph '", name_, "' has a cycle through node ", n->DebugName()));
      }
    }
  }
  return order;
}

absl::Status Graph::SortTopologically() {
  absl::StatusOr<std::vector<Node*>> order = TopologicalOrder();
  if (!order.ok()) return order.status();
  absl::flat_hash_map<const Node*, std::list<std::unique_ptr<Node>>::iterator> where;
  for (auto it = nodes_.begin(); it != nodes_.end(); ++it) where[it->get()] = it;
  std::list<std::unique_ptr<Node>> sorted;
  for (Node* n : *order) sorted.splice(sorted.end(), nodes_, where[n]);
  nodes_ = std::move(sorted);
  for (auto it = nodes_.begin(); it != nodes_.end(); ++it) (*it)->self_ = it;
  return absl::OkStatus();
}

absl::Status Graph::Verify(bool check_types) const {
  absl::flat_hash_set<const Value*> live;
  absl::flat_hash_set<std::string> names;
  for (const auto& v : values_) {
    live.insert(v.get());
    if (!names.insert(v->name_).second) {
      return absl::FailedPreconditionError(absl::StrCat("value name '", v->name_, "' is defined twice"));
    }
    const int sources = (v->producer_ != nullptr) + v->is_constant() + v->is_graph_input_;
    if (sources != 1) {
      return absl::FailedPreconditionError(
          absl::StrCat("value '", v->name_, "' must have exactly one definition (node output, constant or graph input)"));
    }
    if (v->is_constant() && v->type_ != v->constant_->type()) {
      return absl::FailedPreconditionError(absl::StrCat("constant '", v->name_, "' has type ", v->type_.ToString(),
                                                        " but its data is ", v->constant_->type().ToString()));
    }
  }
  absl::flat_hash_set<const Node*> node_set;
  for (const auto& n : nodes_) node_set.insert(n.get());
  for (const auto& n : nodes_) {
    for (int i = 0; i < n->num_inputs(); ++i) {
      Value* in = n->inputs_[i];
      if (in == nullptr) continue;
      if (!live.contains(in)) {
        return absl::FailedPreconditionError(absl::StrCat(n->DebugName(), " input ", i, " refers to a deleted value"));
      }
      if (in->producer_ != nullptr && !node_set.contains(in->producer_)) {
        return absl::FailedPreconditionError(
            absl::StrCat(n->DebugName(), " input '", in->name_, "' is produced by a deleted node"));
      }
      if (std::find(in->uses_.begin(), in->uses_.end(), Use{n.get(), i}) == in->uses_.end()) {
        return absl::FailedPreconditionError(
            absl::StrCat("use list of '", in->name_, "' is missing ", n->DebugName(), " input ", i));
      }
    }
    for (int i = 0; i < n->num_outputs(); ++i) {
      Value* o = n->outputs_[i];
      if (o->producer_ != n.get() || o->producer_output_ != i) {
        return absl::FailedPreconditionError(
            absl::StrCat(n->DebugName(), " output ", i, " '", o->name_, "' does not point back to its producer"));
      }
    }
  }
  for (const auto& v : values_) {
    for (const Use& u : v->uses_) {
      if (!node_set.contains(u.node) || u.input_index >= u.node->num_inputs() || u.node->inputs_[u.input_index] != v.get()) {
        return absl::FailedPreconditionError(absl::StrCat("use list of '", v->name_, "' has a stale entry"));
      }
    }
  }
  for (const Value* o : outputs_) {
    if (!live.contains(o)) return absl::FailedPreconditionError("a graph output refers to a deleted value");
  }
  absl::StatusOr<std::vector<Node*>> order = TopologicalOrder();
  if (!order.ok()) return order.status();
  if (check_types) return VerifyTypes(*this, *order);
  return absl::OkStatus();
}

int64_t Graph::ConstantElements() const {
  int64_t n = 0;
  for (const auto& v : values_) {
    if (v->is_constant()) n += v->constant_->num_elements();
  }
  return n;
}

int64_t Graph::ConstantBytes() const {
  int64_t n = 0;
  for (const auto& v : values_) {
    if (v->is_constant()) n += v->constant_->byte_size();
  }
  return n;
}

}  // namespace tessel
