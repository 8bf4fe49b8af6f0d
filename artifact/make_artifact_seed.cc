// Writes a small valid artifact (two ops, weights, arena tensors) as the fuzzers' seed.
#include <cstdio>
#include <string>

#include "artifact/artifact.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_artifact_seed OUT.tsl\n");
    return 2;
  }
  tessel::artifact::Plan plan;
  plan.set_graph_name("seed");
  plan.set_target(std::string(tessel::RuntimeTargetFamily()));
  plan.set_pipeline("cnn");
  plan.set_arena_bytes(128);
  auto add = [&](const char* name, tessel::artifact::Tensor::Storage storage, uint64_t offset) {
    auto* t = plan.add_tensors();
    t->set_name(name);
    t->set_dtype(0);
    t->add_shape(2);
    t->add_shape(4);
    t->set_storage(storage);
    t->set_offset(offset);
    t->set_bytes(32);
  };
  add("x", tessel::artifact::Tensor::ARENA, 0);
  add("w", tessel::artifact::Tensor::WEIGHTS, 0);
  add("y", tessel::artifact::Tensor::ARENA, 64);
  auto* op = plan.add_ops();
  op->set_name("add");
  op->set_op_type("Add");
  op->set_kernel("reference");
  op->add_inputs(0);
  op->add_inputs(1);
  op->add_outputs(2);
  auto* attr = op->add_attributes();
  attr->set_name("note");
  attr->set_s("seed");
  plan.add_inputs(0);
  plan.add_outputs(2);
  std::string weights(64, '\0');
  for (int i = 0; i < 8; ++i) reinterpret_cast<float*>(weights.data())[i] = 0.5f * i;
  absl::Status s = tessel::WriteArtifact(argv[1], plan, weights);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
