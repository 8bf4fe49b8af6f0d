// The `tessel` command: one table of subcommands, CNN and LLM alike.
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "cli/cli.h"
#include "cli/commands.h"
#include "support/size_limits.h"

namespace {

const tessel::cli::Command kCommands[] = {
    {"compile", "compile a model to a deployable artifact (.tsl) or to C", tessel::CompileCommand},
    {"run", "run a model on .npy inputs, write .npy outputs", tessel::RunCommand},
    {"opt", "run graph optimization passes (--pipeline or -O0..-O3), write .tir or .onnx", tessel::OptCommand},
    {"inspect", "show a model's operators, shapes, kernels and memory (--profile for per-op times)",
     tessel::InspectCommand},
    {"bench", "latency of a compiled model (median/min; last line JSON)", tessel::BenchCommand},
    {"classify", "classify an image with a compiled CNN (top-k with labels)", tessel::ClassifyCommand},
    {"generate", "generate text with a Llama-family model (GGUF or safetensors)", tessel::GenerateCommand},
    {"perplexity", "perplexity of a Llama-family model on a text file", tessel::PerplexityCommand},
    {"serve", "serve a Llama-family model over HTTP (OpenAI-compatible, continuous batching)", tessel::ServeCommand},
    {"logits", "write the logits of every prompt position as .npy", tessel::LogitsCommand},
    {"quantize", "quantize a Llama-family model's weights (rtn, gptq, awq; ggml types)", tessel::QuantizeCommand},
};

void PrintHelp(FILE* out) {
  std::fprintf(out,
               "usage: tessel <command> [options]\n\nTessel: an ahead-of-time ML compiler and runtime for edge "
               "SoCs.\n\ncommands:\n");
  for (const auto& c : kCommands) std::fprintf(out, "  %-12s %s\n", c.name.c_str(), c.summary.c_str());
  std::fprintf(out, "\nRun 'tessel help <command>' or 'tessel <command> --help' for a command's options.\n");
}

// The last resort for an allocation that no size check foresaw: one line and exit status 1, never an
// abort. Sizes from users and files are checked before allocating (support/size_limits.h); this
// catches what remains, such as a file larger than the memory left.
int Run(const tessel::cli::Command& c, int argc, char** argv) {
  try {
    return c.run(argc, argv);
  } catch (const std::bad_alloc&) {
    absl::StatusOr<tessel::MemoryCeiling> ceiling = tessel::GetMemoryCeiling();
    std::fprintf(stderr, "tessel %s: out of memory while running the command: an allocation failed (%s)\n",
                 c.name.c_str(), ceiling.ok() ? ceiling->description.c_str() : "memory size unknown");
    return 1;
  }
}

const tessel::cli::Command* Find(const char* name) {
  for (const auto& c : kCommands) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    PrintHelp(stderr);
    return 2;
  }
  const bool help = std::strcmp(argv[1], "help") == 0;
  if (help || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    if (!help || argc < 3) {
      PrintHelp(stdout);
      return 0;
    }
    // `tessel help COMMAND` is `tessel COMMAND --help`.
    const tessel::cli::Command* c = Find(argv[2]);
    if (c == nullptr) {
      std::fprintf(stderr, "tessel: unknown command '%s' (run 'tessel --help')\n", argv[2]);
      return 2;
    }
    char flag[] = "--help";
    char* args[] = {flag, nullptr};
    return Run(*c, 1, args);
  }
  if (const tessel::cli::Command* c = Find(argv[1])) return Run(*c, argc - 2, argv + 2);
  std::fprintf(stderr, "tessel: unknown command '%s' (run 'tessel --help')\n", argv[1]);
  return 2;
}
