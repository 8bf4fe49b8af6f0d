// Graphviz DOT export of a Graph, for looking at models: `dot -Tsvg graph.dot -o graph.svg`.
#ifndef TESSEL_GRAPH_DOT_H_
#define TESSEL_GRAPH_DOT_H_

#include <string>

#include "graph/graph.h"

namespace tessel {

// One DOT digraph. Nodes are boxes labelled with the op type (domain-qualified when the domain is
// non-empty, and shaded) and the node name; graph inputs are blue inverted houses and graph outputs
// green houses, both labelled with the value name and type; constants are small grey ellipses with
// their name and type. Every value use is an edge labelled with the value's type. Node statements use
// generated ids (in0, c0, n0, out0), so any value or node name is safe inside the quoted labels.
std::string ToDot(const Graph& g);

}  // namespace tessel

#endif  // TESSEL_GRAPH_DOT_H_
