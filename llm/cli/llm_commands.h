// The LLM subcommands of `tessel` (and of the standalone `tessel_llm`): generate, perplexity, logits,
// quantize.
// Each takes the arguments after the subcommand name and returns the process exit code.
#ifndef TESSEL_LLM_CLI_LLM_COMMANDS_H_
#define TESSEL_LLM_CLI_LLM_COMMANDS_H_

#include "absl/status/statusor.h"
#include "tools/cli.h"

namespace tessel {

int GenerateCommand(int argc, char** argv);
int PerplexityCommand(int argc, char** argv);
int LogitsCommand(int argc, char** argv);
// Weight-only INT4/INT3 quantization (RTN, GPTQ, AWQ) of a GGUF model; see quantize_command.cc.
int QuantizeCommand(int argc, char** argv);

// --threads, read and checked (1 to 256) before anything starts threads on it.
absl::StatusOr<int> ThreadsArg(const cli::Args& args);

}  // namespace tessel

#endif  // TESSEL_LLM_CLI_LLM_COMMANDS_H_
