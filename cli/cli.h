// Small command-line toolkit for the `tessel` subcommands: flags, positional arguments, help text.
#ifndef TESSEL_CLI_CLI_H_
#define TESSEL_CLI_CLI_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tessel::cli {

struct FlagSpec {
  std::string name;        // without dashes, e.g. "output-dir"
  std::string value_name;  // e.g. "DIR"; empty for a boolean switch
  std::string help;
  bool repeated = false;
  std::string default_value;
};

// Parsed arguments of one subcommand.
class Args {
 public:
  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  std::string Get(const std::string& name) const;
  const std::vector<std::string>& GetAll(const std::string& name) const;
  absl::StatusOr<int64_t> GetInt(const std::string& name) const;
  absl::StatusOr<double> GetDouble(const std::string& name) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  friend absl::StatusOr<Args> Parse(const std::string&, const std::vector<FlagSpec>&, int, char**);
  std::map<std::string, std::vector<std::string>> values_;
  std::map<std::string, std::string> defaults_;
  std::vector<std::string> positional_;
};

// Parses argv (after the subcommand). "--name=value", "--name value" and "-O2"-style single-dash
// flags declared with a one-letter name are accepted; unknown flags are an error naming them.
absl::StatusOr<Args> Parse(const std::string& command, const std::vector<FlagSpec>& flags, int argc, char** argv);

std::string Usage(const std::string& command, const std::string& synopsis, const std::string& description,
                  const std::vector<FlagSpec>& flags);

// A subcommand: returns the process exit code.
struct Command {
  std::string name;
  std::string summary;
  int (*run)(int argc, char** argv);
};

// Prints "tessel <command>: <message>" to stderr and returns 1.
int Fail(const std::string& command, const absl::Status& status);

// An error when `output` names the same file as one of `inputs` (the same device and inode, whatever
// the spelling): a command must not replace what it reads, e.g. `compile x.onnx -o x.onnx`.
absl::Status CheckOutputIsNotAnInput(const std::string& output, const std::vector<std::string>& inputs);

bool WantsHelp(int argc, char** argv);

}  // namespace tessel::cli

#endif  // TESSEL_CLI_CLI_H_
