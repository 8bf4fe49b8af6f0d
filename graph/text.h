// The readable text form of a Graph: PrintGraph writes it and ParseGraph reads it back exactly, so
// tests and tools can state graphs as text and compare graphs by their printed form.
//
// Syntax (MLIR/LLVM flavoured; `#` starts a comment that runs to the end of the line; whitespace,
// newlines included, only separates tokens):
//
//   graph @main {
//     input %x : f32[N,3,32,32]
//     const %w : f32[2,3,1,1] = [0.5, -1.25, 1e-05, inf, -nan, nan(0x7fc00001)]
//     const %big : f32[64,3,7,7] = <elided 9408 elements>
//     %y = Conv "conv_0" (%x, %w, _) {group = 1, pads = [0, 0, 0, 0]} : f32[N,2,32,32]
//     %a, %b = Split "split_0" (%y) {axis = 1} : f32[N,1,32,32], f32[N,1,32,32]
//     %z = tessel.FusedConv "f" (%a) {activation = "relu"} : f32[N,1,32,32]@nhwc
//     output %b, %z
//   }
//
// Statements:
//   input %name : TYPE                  a graph input, in graph input order
//   const %name : TYPE = DATA           constant data, every element, flat in row-major order
//   %r0, %r1 = OP "node name" (ARGS) {ATTRS} : TYPE0, TYPE1
//                                       a node; its output types are stated, never inferred;
//                                       `{ATTRS}` is left out when there are none
//   OP "node name" (ARGS) {ATTRS}       a node without outputs
//   output %v0, %v1                     the graph outputs (at most one such line)
// A value must be defined before it is used. PrintGraph writes inputs, then constants, then nodes in
// topological order, then the output line.
//
// Names: `%x` when the name uses only [A-Za-z0-9_.:/-] and does not end in ':', else quoted, as in
//   `%"onnx::Conv 1"`. Since ':' belongs to names, `%x:f32[1]` reads as the name "x:f32"; write
//   `%x : f32[1]` (or `%x: f32[1]`). `_` in ARGS is an omitted optional input. The graph name after `@` follows the
//   same rule. Node names are always quoted strings.
// Strings: double quoted on one line; escapes \\ \" \n \t \r and \xHH; other bytes stand as they are.
// OP: `Conv`, or `domain.Op` when the node's domain is non-empty (`tessel.FusedConv`,
//   `com.microsoft.Gelu`: the last part is the op type). Parts that are not identifiers are quoted:
//   `"my domain"."Op 2"`.
// TYPE: `f32[N,3,224,224]`, `i64[]` for a scalar, `f32[N,8]@nhwc` with a layout. A dimension is a
//   decimal extent or a symbol: an identifier that may contain `?` (generated unknowns print as
//   `?3`), or a quoted string for any other symbol.
// ATTRS: `name = VALUE` separated by commas, sorted by name. VALUE is
//   int `3` | float `0.5`, `1.0`, `1e-05`, `inf`, `-inf`, `nan` (a float always has '.', an exponent
//   or is inf/nan) | string `"relu"` | ints `[1, 2]` | floats `[1.0, 2.5]` | strings `["a", "b"]` |
//   empty lists `ints[]`, `floats[]`, `strings[]` | tensor `tensor<f32[2] [1.0, 2.0]>`.
// DATA: `[e0, e1, ...]` with exactly as many elements as TYPE has. Floats print as the shortest
//   decimal that reads back to the same bits in their own precision (f16 and bf16 too); `nan` and
//   `-nan` are the quiet NaN of the dtype and any other NaN prints its bits, `nan(0x7fc00001)`.
//   Integers are decimal (i4 in -8..7), bool is `true`/`false`. `<elided N elements>` appears only
//   with PrintOptions::elide_large_constants and cannot be parsed.
//
// Exactness: PrintGraph(*ParseGraph(PrintGraph(g))) == PrintGraph(g), and the parsed graph has the
// same values, nodes, names, domains, attributes, types and constant bytes. Two things do not carry
// over: the padding nibble after an odd count of i4 elements (always read back as zero), and the
// order of Graph::values() beyond what the text states (inputs, constants, node outputs).
#ifndef TESSEL_GRAPH_TEXT_H_
#define TESSEL_GRAPH_TEXT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"

namespace tessel {

struct PrintOptions {
  // Replace the data of constants (and tensor attributes) with more than max_inline_elements
  // elements by `<elided N elements>`; such text is for reading and does not parse.
  bool elide_large_constants = false;
  int64_t max_inline_elements = 16;
};

std::string PrintGraph(const Graph& g, const PrintOptions& options = {});

// Reads the text form. Errors are InvalidArgument and read
// "line 3, column 17: expected ',' or ')' after a node input, found '{'".
absl::StatusOr<std::unique_ptr<Graph>> ParseGraph(absl::string_view text);

}  // namespace tessel

#endif  // TESSEL_GRAPH_TEXT_H_
