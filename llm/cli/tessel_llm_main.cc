// tessel_llm: the LLM subcommands as a standalone binary (the same code the `tessel` tool runs).
#include <cstdio>
#include <cstring>

#include "llm/cli/llm_commands.h"

namespace {

constexpr struct {
  const char* name;
  const char* summary;
  int (*run)(int, char**);
} kCommands[] = {
    {"generate", "continue a prompt, streaming tokens, then print prefill/decode speed", tessel::GenerateCommand},
    {"perplexity", "perplexity of a model on a text file", tessel::PerplexityCommand},
    {"logits", "write the logits of every prompt position to a .npy file", tessel::LogitsCommand},
    {"quantize", "weight-only INT4/INT3 quantization (rtn, gptq, awq) of a GGUF model", tessel::QuantizeCommand},
};

int PrintUsage(FILE* out) {
  std::fprintf(out, "usage: tessel_llm <command> [options]  (tessel_llm <command> --help for details)\n\ncommands:\n");
  for (const auto& c : kCommands) std::fprintf(out, "  %-12s %s\n", c.name, c.summary);
  return out == stdout ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return PrintUsage(stderr);
  if (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "help") == 0) {
    return PrintUsage(stdout);
  }
  for (const auto& c : kCommands) {
    if (std::strcmp(argv[1], c.name) == 0) return c.run(argc - 2, argv + 2);
  }
  std::fprintf(stderr, "tessel_llm: unknown command '%s'\n", argv[1]);
  return PrintUsage(stderr);
}
