// The `tessel` command-line front end: dispatches to one subcommand.
#include <cstdio>
#include <cstring>
#include <string>

#include "llm/cli/llm_commands.h"
#include "tools/cli.h"
#include "tools/commands.h"

namespace {

const tessel::cli::Command kCommands[] = {
    {"compile", "compile a model to a deployable artifact (.tsl)", tessel::CompileCommand},
    {"run", "run a model on .npy inputs, write .npy outputs", tessel::RunCommand},
    {"opt", "run graph optimization passes (--pipeline or -O0..-O3), write .tir or .onnx", tessel::OptCommand},
    {"classify", "classify an image with a compiled CNN (top-k with labels)", tessel::ClassifyCommand},
    {"bench", "latency of a compiled model (median/min; last line JSON)", tessel::BenchCommand},
    {"generate", "generate text with a Llama-family model (GGUF or safetensors)", tessel::GenerateCommand},
    {"perplexity", "perplexity of a Llama-family model on a text file", tessel::PerplexityCommand},
    {"quantize", "weight-only INT4/INT3 quantization (rtn, gptq, awq) of a GGUF model", tessel::QuantizeCommand},
    {"logits", "write the logits of every prompt position as .npy", tessel::LogitsCommand},
    {"inspect", "show a model's operators, shapes, parameters and IR (--dot for Graphviz)", tessel::InspectCommand},
};

void PrintHelp() {
  std::printf("usage: tessel <command> [options]\n\nTessel: an ahead-of-time ML compiler and runtime for edge SoCs.\n\ncommands:\n");
  for (const auto& c : kCommands) std::printf("  %-12s %s\n", c.name.c_str(), c.summary.c_str());
  std::printf("\nRun 'tessel <command> --help' for a command's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    PrintHelp();
    return argc < 2 ? 2 : 0;
  }
  for (const auto& c : kCommands) {
    if (c.name == argv[1]) return c.run(argc - 2, argv + 2);
  }
  std::fprintf(stderr, "tessel: unknown command '%s' (run 'tessel --help')\n", argv[1]);
  return 2;
}
