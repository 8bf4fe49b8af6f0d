// Graphviz DOT export: one statement per graph input, constant, node and output, then the edges.
#include "graph/dot.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace tessel {
namespace {

// A DOT quoted string. Backslash starts DOT's own escapes (\n, \l, ...), so it is doubled; control
// characters other than newline would confuse Graphviz and become spaces.
std::string Quote(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\\' || c == '"') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out.append("\\n");
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
  return out;
}

// Two lines, as DOT draws "a\nb".
std::string Label(absl::string_view first, absl::string_view second) {
  return Quote(absl::StrCat(first, "\n", second));
}

}  // namespace

std::string ToDot(const Graph& g) {
  std::string out = absl::StrCat("digraph ", Quote(g.name()), " {\n");
  out.append("  rankdir=TB;\n");
  out.append("  node [fontname=\"Helvetica\", fontsize=10];\n");
  out.append("  edge [fontname=\"Helvetica\", fontsize=8];\n");

  // Where each value comes from, as a DOT node id.
  absl::flat_hash_map<const Value*, std::string> source;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value* v = g.inputs()[i];
    const std::string id = absl::StrCat("in", i);
    source[v] = id;
    absl::StrAppend(&out, "  ", id, " [shape=invhouse, style=filled, fillcolor=\"#cfe2ff\", label=",
                    Label(v->name(), v->type().ToString()), "];\n");
  }
  int constant_index = 0;
  for (const auto& v : g.values()) {
    if (!v->is_constant()) continue;
    const std::string id = absl::StrCat("c", constant_index++);
    source[v.get()] = id;
    absl::StrAppend(&out, "  ", id, " [shape=ellipse, style=filled, fillcolor=\"#eeeeee\", fontsize=8, label=",
                    Label(v->name(), v->type().ToString()), "];\n");
  }
  // Topological order reads top to bottom like the text form; a cyclic graph still draws.
  std::vector<const Node*> nodes;
  absl::StatusOr<std::vector<Node*>> order = g.TopologicalOrder();
  if (order.ok()) {
    nodes.assign(order->begin(), order->end());
  } else {
    for (const auto& n : g.nodes()) nodes.push_back(n.get());
  }
  absl::flat_hash_map<const Node*, std::string> node_id;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node* n = nodes[i];
    const std::string id = absl::StrCat("n", i);
    node_id[n] = id;
    for (const Value* o : n->outputs()) source[o] = id;
    const std::string op = n->domain().empty() ? n->op_type() : absl::StrCat(n->domain(), ".", n->op_type());
    absl::StrAppend(&out, "  ", id, " [shape=box", n->domain().empty() ? "" : ", style=filled, fillcolor=\"#ffe5b4\"",
                    ", label=", Label(op, n->name()), "];\n");
  }
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const Value* v = g.outputs()[i];
    absl::StrAppend(&out, "  out", i, " [shape=house, style=filled, fillcolor=\"#d1f2d1\", label=",
                    Label(v->name(), v->type().ToString()), "];\n");
  }

  for (const Node* n : nodes) {
    for (const Value* in : n->inputs()) {
      if (in == nullptr) continue;  // an omitted optional input has no edge
      auto it = source.find(in);
      if (it == source.end()) continue;  // a value outside this graph (a broken graph) has no source
      absl::StrAppend(&out, "  ", it->second, " -> ", node_id[n], " [label=", Quote(in->type().ToString()), "];\n");
    }
  }
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const Value* v = g.outputs()[i];
    auto it = source.find(v);
    if (it == source.end()) continue;
    absl::StrAppend(&out, "  ", it->second, " -> out", i, " [label=", Quote(v->type().ToString()), "];\n");
  }
  out.append("}\n");
  return out;
}

}  // namespace tessel
