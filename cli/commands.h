// The tessel subcommands, one file each (cmd_*.cc), dispatched by the one command table in
// tessel_main.cc. Each takes the arguments after the subcommand's name and returns the exit code.
#ifndef TESSEL_CLI_COMMANDS_H_
#define TESSEL_CLI_COMMANDS_H_

#include <string>

#include "absl/status/statusor.h"
#include "cli/cli.h"
#include "runtime/worker_wait.h"

namespace tessel {

// CNN / graph models (cmd_compile.cc, cmd_run.cc, ...).
int CompileCommand(int argc, char** argv);
int RunCommand(int argc, char** argv);
int OptCommand(int argc, char** argv);
int ClassifyCommand(int argc, char** argv);
int BenchCommand(int argc, char** argv);
int InspectCommand(int argc, char** argv);

// Llama-family models (cmd_llm.cc, cmd_quantize.cc).
int GenerateCommand(int argc, char** argv);
int PerplexityCommand(int argc, char** argv);
int LogitsCommand(int argc, char** argv);
int ServeCommand(int argc, char** argv);
int QuantizeCommand(int argc, char** argv);

// The --threads flag of every command that takes one, with its range (1 to 256), and its value, read and
// checked before anything starts threads on it.
cli::FlagSpec ThreadsFlag(const std::string& help, const std::string& default_value);
absl::StatusOr<int> ThreadsArg(const cli::Args& args);

// The --workers flag of the commands that run compiled CNN artifacts (run, bench): how pool workers wait
// between operators (runtime/worker_wait.h), "adaptive" by default.
cli::FlagSpec WorkersFlag();
absl::StatusOr<WorkerWait> WorkersArg(const cli::Args& args);

}  // namespace tessel

#endif  // TESSEL_CLI_COMMANDS_H_
