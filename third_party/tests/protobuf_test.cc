// Round trip of a project message through the wire format with Debian's libprotobuf.
#include <string>

#include "gtest/gtest.h"
#include "third_party/tests/roundtrip.pb.h"

namespace {

TEST(ProtobufTest, PlanRecordRoundTrips) {
  tessel::testing::PlanRecord plan;
  plan.set_format_version(3);
  plan.set_pipeline("fold-constants,dce,cse");
  auto* t = plan.add_tensors();
  t->set_name("conv1.out");
  t->add_shape(1);
  t->add_shape(64);
  t->add_shape(112);
  t->add_shape(112);
  t->set_arena_offset(4096);
  (*plan.mutable_attributes())["alpha"] = 0.25f;
  plan.set_blob(std::string("\x00\x01\xff", 3));

  std::string wire;
  ASSERT_TRUE(plan.SerializeToString(&wire));
  tessel::testing::PlanRecord back;
  ASSERT_TRUE(back.ParseFromString(wire));
  EXPECT_EQ(back.format_version(), 3u);
  EXPECT_EQ(back.pipeline(), "fold-constants,dce,cse");
  ASSERT_EQ(back.tensors_size(), 1);
  EXPECT_EQ(back.tensors(0).name(), "conv1.out");
  ASSERT_EQ(back.tensors(0).shape_size(), 4);
  EXPECT_EQ(back.tensors(0).shape(3), 112);
  EXPECT_EQ(back.tensors(0).arena_offset(), 4096u);
  EXPECT_FLOAT_EQ(back.attributes().at("alpha"), 0.25f);
  EXPECT_EQ(back.blob(), std::string("\x00\x01\xff", 3));
  // Field 1 (varint) is encoded first: tag byte 0x08, value 3.
  ASSERT_GE(wire.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(wire[0]), 0x08);
  EXPECT_EQ(static_cast<unsigned char>(wire[1]), 3);
}

TEST(ProtobufTest, TruncatedInputFailsToParse) {
  tessel::testing::PlanRecord plan;
  plan.set_pipeline("a-long-enough-pipeline-string");
  std::string wire = plan.SerializeAsString();
  tessel::testing::PlanRecord back;
  EXPECT_FALSE(back.ParseFromString(wire.substr(0, wire.size() - 5)));
}

}  // namespace
