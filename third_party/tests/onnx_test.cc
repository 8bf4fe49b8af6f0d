// ONNX's protobuf classes from Debian's libonnx-dev: build a model, serialize, parse back.
#include <string>

#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"

namespace {

TEST(OnnxTest, ModelProtoRoundTrips) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(13);
  auto* graph = model.mutable_graph();
  graph->set_name("g");
  auto* node = graph->add_node();
  node->set_op_type("Relu");
  node->set_name("relu_0");
  node->add_input("x");
  node->add_output("y");
  auto* init = graph->add_initializer();
  init->set_name("w");
  init->set_data_type(onnx::TensorProto::FLOAT);
  init->add_dims(2);
  init->add_float_data(1.5f);
  init->add_float_data(-2.0f);

  std::string wire = model.SerializeAsString();
  onnx::ModelProto back;
  ASSERT_TRUE(back.ParseFromString(wire));
  EXPECT_EQ(back.ir_version(), 8);
  EXPECT_EQ(back.opset_import(0).version(), 13);
  ASSERT_EQ(back.graph().node_size(), 1);
  EXPECT_EQ(back.graph().node(0).op_type(), "Relu");
  EXPECT_EQ(back.graph().initializer(0).float_data(1), -2.0f);
  EXPECT_EQ(back.graph().initializer(0).data_type(), onnx::TensorProto::FLOAT);
}

}  // namespace
