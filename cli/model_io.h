// Loading models and input tensors for the CLI.
#ifndef TESSEL_CLI_MODEL_IO_H_
#define TESSEL_CLI_MODEL_IO_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace tessel {

// Loads an ONNX model (by extension .onnx) or a Tessel text IR file (.tir).
absl::StatusOr<std::unique_ptr<Graph>> LoadGraph(const std::string& path);

// A model input (of a graph or a compiled artifact) as `tessel run --input` names it.
struct ModelInput {
  std::string name;
  TensorType type;
};
std::vector<ModelInput> InputsOf(const Graph& graph);

// Parses "--input NAME=FILE.npy" values (or a bare FILE.npy for a single-input model) and reads them, in
// `inputs` order. A name that is no input, an input given twice and an input left out are errors that
// list the model's inputs.
absl::StatusOr<std::vector<Tensor>> LoadInputs(const std::vector<ModelInput>& inputs,
                                               const std::vector<std::string>& specs);

// The inputs that `bench` and `inspect --profile` time a model on: the --input files when any are given
// (then every input, as LoadInputs), else stand-ins of the inputs' static types, f32 uniform in [-1, 1]
// (seeded) and other types zero. Drivers that time a peer on the same files pass them (benchmarks/cnn).
absl::StatusOr<std::vector<Tensor>> TimingInputs(const std::vector<ModelInput>& inputs,
                                                 const std::vector<std::string>& specs);

// A file name for a tensor name ("/layer1/Relu_output_0" -> "layer1_Relu_output_0").
std::string SanitizeFileName(const std::string& name);

}  // namespace tessel

#endif  // TESSEL_CLI_MODEL_IO_H_
