// Artifact container: round trip through a file with zero-copy weights, and clear errors for
// corrupt, truncated, wrong-version and wrong-target files.
#include "artifact/artifact.h"

#include <cstring>
#include <fstream>

#include "gtest/gtest.h"

namespace tessel {
namespace {

artifact::Plan SamplePlan(const std::string& target) {
  artifact::Plan plan;
  plan.set_graph_name("g");
  plan.set_target(target);
  plan.set_pipeline("fold-constants,dce");
  plan.set_arena_bytes(128);
  auto* w = plan.add_tensors();
  w->set_name("w");
  w->set_dtype(0);
  w->add_shape(3);
  w->set_storage(artifact::Tensor::WEIGHTS);
  w->set_offset(64);
  w->set_bytes(12);
  auto* x = plan.add_tensors();
  x->set_name("x");
  x->set_dtype(0);
  x->add_shape(3);
  x->set_bytes(12);
  auto* op = plan.add_ops();
  op->set_name("relu");
  op->set_op_type("Relu");
  op->set_kernel("reference");
  op->add_inputs(1);
  op->add_outputs(1);
  plan.add_inputs(1);
  plan.add_outputs(1);
  return plan;
}

std::string Weights() {
  std::string w(128, '\0');
  const float v[3] = {1.5f, -2.0f, 4.25f};
  std::memcpy(w.data() + 64, v, sizeof(v));
  return w;
}

TEST(ArtifactTest, RoundTripsThroughFileWithMappedWeights) {
  const std::string path = ::testing::TempDir() + "/a.tsl";
  ASSERT_TRUE(WriteArtifact(path, SamplePlan(std::string(RuntimeTargetFamily())), Weights()).ok());
  auto a = Artifact::Load(path);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->plan().pipeline(), "fold-constants,dce");
  EXPECT_EQ((*a)->plan().ops(0).kernel(), "reference");
  ASSERT_EQ((*a)->weights_bytes(), 128u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*a)->weights()) % 64, 0u) << "weights must be 64-byte aligned in the mapping";
  float v[3];
  std::memcpy(v, (*a)->weights() + 64, sizeof(v));
  EXPECT_EQ(v[0], 1.5f);
  EXPECT_EQ(v[2], 4.25f);
}

TEST(ArtifactTest, RejectsBadFiles) {
  auto bytes = SerializeArtifact(SamplePlan(std::string(RuntimeTargetFamily())), Weights());
  ASSERT_TRUE(bytes.ok());
  // Every truncation fails cleanly.
  for (size_t n = 0; n < bytes->size(); ++n) {
    EXPECT_FALSE(Artifact::FromBytes(absl::string_view(*bytes).substr(0, n)).ok()) << n;
  }
  std::string bad_magic = *bytes;
  bad_magic[0] = 'X';
  EXPECT_NE(Artifact::FromBytes(bad_magic).status().message().find("not a Tessel artifact"), std::string::npos);
  std::string bad_version = *bytes;
  bad_version[8] = 99;
  EXPECT_NE(Artifact::FromBytes(bad_version).status().message().find("format version 99"), std::string::npos);
  std::string flipped_weight = *bytes;
  flipped_weight[flipped_weight.size() - 60] ^= 1;
  EXPECT_NE(Artifact::FromBytes(flipped_weight).status().message().find("weights checksum"), std::string::npos);
  ArtifactLoadOptions fast;
  fast.verify_weights = false;
  EXPECT_TRUE(Artifact::FromBytes(flipped_weight, fast).ok());
  std::string flipped_plan = *bytes;
  flipped_plan[70] ^= 4;
  EXPECT_NE(Artifact::FromBytes(flipped_plan).status().message().find("plan checksum"), std::string::npos);
  auto other = SerializeArtifact(SamplePlan(RuntimeTargetFamily() == "x86_64" ? "aarch64-neon" : "x86_64"), Weights());
  ASSERT_TRUE(other.ok());
  EXPECT_NE(Artifact::FromBytes(*other).status().message().find("built for target"), std::string::npos);
  EXPECT_EQ(Artifact::Load("/nonexistent.tsl").status().code(), absl::StatusCode::kNotFound);
}

TEST(ArtifactTest, RejectsOutOfRangeTensorsWhenWriting) {
  artifact::Plan plan = SamplePlan("x86_64");
  plan.mutable_tensors(0)->set_offset(128);  // past the 128-byte weights section
  EXPECT_NE(SerializeArtifact(plan, Weights()).status().message().find("outside its weights section"), std::string::npos);
  plan = SamplePlan("x86_64");
  plan.mutable_ops(0)->set_inputs(0, 7);
  EXPECT_NE(SerializeArtifact(plan, Weights()).status().message().find("refers to tensor 7"), std::string::npos);
  plan = SamplePlan("x86_64");
  plan.mutable_tensors(1)->set_bytes(16);
  EXPECT_NE(SerializeArtifact(plan, Weights()).status().message().find("its shape needs 12"), std::string::npos);
}

}  // namespace
}  // namespace tessel
