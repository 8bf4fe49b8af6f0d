// Fuzz target for the ONNX importer: any byte string that parses as a ModelProto is imported or
// refused with a status; what imports verifies, prints, and goes through the -O3 pass pipeline (whose
// passes see whatever graphs the importer lets through) and verifies again.
#include <cstddef>
#include <cstdint>

#include "graph/onnx/onnx_importer.h"
#include "graph/text.h"
#include "onnx/onnx_pb.h"
#include "passes/pass_manager.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  onnx::ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size))) return 0;
  // External data resolves under a folder that does not exist: the fuzzer reads no real files.
  auto graph = tessel::ImportOnnxModel(model, "/nonexistent/tessel-fuzz");
  if (!graph.ok()) return 0;
  if (!(*graph)->Verify().ok()) __builtin_trap();  // the importer's graphs are well formed
  tessel::PrintOptions print;
  print.elide_large_constants = true;
  (void)tessel::PrintGraph(**graph, print);
  auto pm = tessel::PassManager::Create("O3");
  if (pm.ok() && pm->Run(**graph).ok()) (void)(*graph)->Verify();
  return 0;
}
