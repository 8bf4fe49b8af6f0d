// ONNX export.
#include "graph/onnx/onnx_exporter.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "support/atomic_file.h"

namespace tessel {
namespace {

int32_t OnnxDType(DType t) {
  switch (t) {
    case DType::kF32: return onnx::TensorProto::FLOAT;
    case DType::kF16: return onnx::TensorProto::FLOAT16;
    case DType::kF64: return onnx::TensorProto::DOUBLE;
    case DType::kBF16: return onnx::TensorProto::BFLOAT16;
    case DType::kI8: return onnx::TensorProto::INT8;
    case DType::kU8: return onnx::TensorProto::UINT8;
    case DType::kI32: return onnx::TensorProto::INT32;
    case DType::kI64: return onnx::TensorProto::INT64;
    case DType::kBool: return onnx::TensorProto::BOOL;
    case DType::kI4: return onnx::TensorProto::UINT8;  // packed nibbles; ONNX 1.12 has no int4
    case DType::kI16: return onnx::TensorProto::INT16;
    case DType::kU16: return onnx::TensorProto::UINT16;
    case DType::kU32: return onnx::TensorProto::UINT32;
    case DType::kU64: return onnx::TensorProto::UINT64;
  }
  return onnx::TensorProto::UNDEFINED;
}

void FillTensor(const Tensor& t, const std::string& name, onnx::TensorProto* p) {
  p->set_name(name);
  p->set_data_type(OnnxDType(t.dtype()));
  for (int64_t d : t.shape()) p->add_dims(d);
  p->set_raw_data(std::string(static_cast<const char*>(t.raw_data()), t.byte_size()));
}

void FillValueInfo(const Value& v, onnx::ValueInfoProto* info) {
  info->set_name(v.name());
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(OnnxDType(v.type().dtype));
  auto* shape = tensor->mutable_shape();
  for (const Dim& d : v.type().dims) {
    auto* dim = shape->add_dim();
    if (d.is_static()) {
      dim->set_dim_value(d.value());
    } else {
      dim->set_dim_param(d.symbol());
    }
  }
}

void FillAttribute(const std::string& name, const Attribute& a, onnx::AttributeProto* p) {
  p->set_name(name);
  switch (a.kind) {
    case Attribute::Kind::kInt:
      p->set_type(onnx::AttributeProto::INT);
      p->set_i(a.i);
      break;
    case Attribute::Kind::kFloat:
      p->set_type(onnx::AttributeProto::FLOAT);
      p->set_f(a.f);
      break;
    case Attribute::Kind::kString:
      p->set_type(onnx::AttributeProto::STRING);
      p->set_s(a.s);
      break;
    case Attribute::Kind::kInts:
      p->set_type(onnx::AttributeProto::INTS);
      for (int64_t v : a.ints) p->add_ints(v);
      break;
    case Attribute::Kind::kFloats:
      p->set_type(onnx::AttributeProto::FLOATS);
      for (float v : a.floats) p->add_floats(v);
      break;
    case Attribute::Kind::kStrings:
      p->set_type(onnx::AttributeProto::STRINGS);
      for (const std::string& v : a.strings) p->add_strings(v);
      break;
    case Attribute::Kind::kTensor:
      p->set_type(onnx::AttributeProto::TENSOR);
      if (a.t) FillTensor(*a.t, name, p->mutable_t());
      break;
    case Attribute::Kind::kGraph:
      // Not reached: ExportOnnxModel refuses graphs with subgraphs first.
      p->set_type(onnx::AttributeProto::GRAPH);
      break;
  }
}

}  // namespace

absl::StatusOr<onnx::ModelProto> ExportOnnxModel(const Graph& graph, int opset) {
  absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
  if (!order.ok()) return order.status();
  for (const Node* n : *order) {
    for (const auto& [name, a] : n->attributes()) {
      if (a.kind == Attribute::Kind::kGraph) {
        return absl::UnimplementedError(absl::StrCat("node ", n->DebugName(), ": attribute '", name,
                                                     "' is a subgraph; exporting control flow is not supported"));
      }
    }
  }
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("tessel");
  std::set<std::string> domains;
  auto* g = model.mutable_graph();
  g->set_name(graph.name());
  for (const Value* v : graph.inputs()) FillValueInfo(*v, g->add_input());
  for (const Value* v : graph.Constants()) FillTensor(*v->constant(), v->name(), g->add_initializer());
  for (const Node* n : *order) {
    auto* p = g->add_node();
    p->set_name(n->name());
    p->set_op_type(n->op_type());
    if (!n->domain().empty()) {
      p->set_domain(n->domain());
      domains.insert(n->domain());
    }
    for (const Value* in : n->inputs()) p->add_input(in ? in->name() : "");
    for (const Value* out : n->outputs()) {
      p->add_output(out->name());
      FillValueInfo(*out, g->add_value_info());
    }
    for (const auto& [name, attr] : n->attributes()) FillAttribute(name, attr, p->add_attribute());
  }
  for (const Value* v : graph.outputs()) FillValueInfo(*v, g->add_output());
  auto* std_opset = model.add_opset_import();
  std_opset->set_domain("");
  std_opset->set_version(opset);
  for (const std::string& d : domains) {
    auto* o = model.add_opset_import();
    o->set_domain(d);
    o->set_version(1);
  }
  return model;
}

absl::Status ExportOnnxFile(const Graph& graph, const std::string& path, int opset) {
  absl::StatusOr<onnx::ModelProto> model = ExportOnnxModel(graph, opset);
  if (!model.ok()) return model.status();
  std::string bytes;
  if (!model->SerializeToString(&bytes)) return absl::InternalError(absl::StrCat(path, ": cannot serialize the model"));
  return WriteFileAtomically(path, bytes);
}

}  // namespace tessel
