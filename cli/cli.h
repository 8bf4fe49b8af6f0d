// Small command-line toolkit for the `tessel` subcommands: flags, positional arguments, help text.
#ifndef TESSEL_CLI_CLI_H_
#define TESSEL_CLI_CLI_H_

#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tessel::cli {

// The values a numeric flag accepts, declared with the flag (FlagSpec::range): Args::GetInt and GetDouble
// reject a value outside it with a message naming the flag, the value and the range, and Usage prints
// it. Both ends are included unless excluded; the default range is unbounded.
struct Range {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_excluded = false;
  bool hi_excluded = false;

  Range ExcludingLow() const;
  Range ExcludingHigh() const;
  // Never infinity or NaN: no flag means anything by them, and NaN slips past every comparison.
  bool Contains(double v) const;
  // ">= 0", "> 0", "in (0, 1]", "in [1, 256]"; empty when unbounded.
  std::string Describe() const;
};
inline Range AtLeast(double lo) { return Range{lo}; }
inline Range Between(double lo, double hi) { return Range{lo, hi}; }

struct FlagSpec {
  std::string name;        // without dashes, e.g. "output-dir"
  std::string value_name;  // e.g. "DIR"; empty for a boolean switch
  std::string help;
  bool repeated = false;
  std::string default_value;
  Range range;  // numeric flags: the values GetInt / GetDouble accept
};

// Parsed arguments of one subcommand.
class Args {
 public:
  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  std::string Get(const std::string& name) const;
  const std::vector<std::string>& GetAll(const std::string& name) const;
  // The value as a number in the flag's range; a double must also be finite.
  absl::StatusOr<int64_t> GetInt(const std::string& name) const;
  absl::StatusOr<double> GetDouble(const std::string& name) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  friend absl::StatusOr<Args> Parse(const std::string&, const std::vector<FlagSpec>&, int, char**);
  absl::Status CheckRange(const std::string& name, double v, const std::string& text) const;

  std::map<std::string, std::vector<std::string>> values_;
  std::map<std::string, FlagSpec> specs_;
  std::vector<std::string> positional_;
};

// Parses argv (after the subcommand). "--name=value", "--name value" and "-O2"-style single-dash
// flags declared with a one-letter name are accepted; unknown flags are an error naming them.
absl::StatusOr<Args> Parse(const std::string& command, const std::vector<FlagSpec>& flags, int argc, char** argv);

// "-n" for a one-letter flag, "--name" otherwise, as the flag is written in messages and help.
std::string FlagName(const std::string& name);

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
