// Command-line parsing for the tessel subcommands.
#include "cli/cli.h"

#include <sys/stat.h>

#include <cstdio>
#include <cctype>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tessel::cli {

std::string Args::Get(const std::string& name) const {
  auto it = values_.find(name);
  if (it != values_.end() && !it->second.empty()) return it->second.back();
  auto d = defaults_.find(name);
  return d == defaults_.end() ? "" : d->second;
}

const std::vector<std::string>& Args::GetAll(const std::string& name) const {
  static const std::vector<std::string>* empty = new std::vector<std::string>();
  auto it = values_.find(name);
  return it == values_.end() ? *empty : it->second;
}

absl::StatusOr<int64_t> Args::GetInt(const std::string& name) const {
  int64_t v;
  const std::string s = Get(name);
  if (!absl::SimpleAtoi(s, &v)) return absl::InvalidArgumentError(absl::StrCat("--", name, " expects an integer, got '", s, "'"));
  return v;
}

absl::StatusOr<double> Args::GetDouble(const std::string& name) const {
  double v;
  const std::string s = Get(name);
  if (!absl::SimpleAtod(s, &v)) return absl::InvalidArgumentError(absl::StrCat("--", name, " expects a number, got '", s, "'"));
  return v;
}

absl::StatusOr<Args> Parse(const std::string& command, const std::vector<FlagSpec>& flags, int argc, char** argv) {
  Args args;
  for (const FlagSpec& f : flags) {
    if (!f.default_value.empty()) args.defaults_[f.name] = f.default_value;
  }
  auto find = [&](const std::string& name) -> const FlagSpec* {
    for (const FlagSpec& f : flags) {
      if (f.name == name) return &f;
    }
    return nullptr;
  };
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      for (++i; i < argc; ++i) args.positional_.push_back(argv[i]);
      break;
    }
    if (a.size() > 1 && a[0] == '-' && !(a.size() > 1 && (std::isdigit(static_cast<unsigned char>(a[1])) || a[1] == '.'))) {
      std::string body = a.substr(a[1] == '-' ? 2 : 1);
      std::string name = body, value;
      bool has_value = false;
      const size_t eq = body.find('=');
      if (eq != std::string::npos) {
        name = body.substr(0, eq);
        value = body.substr(eq + 1);
        has_value = true;
      }
      const FlagSpec* spec = find(name);
      // Single-dash flags with an attached value, like -O2 (declared as "O").
      if (spec == nullptr && a[1] != '-' && !name.empty() && find(name.substr(0, 1)) != nullptr) {
        spec = find(name.substr(0, 1));
        value = name.substr(1);
        name = name.substr(0, 1);
        has_value = true;
      }
      if (spec == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("unknown flag '", a, "' (see tessel ", command, " --help)"));
      }
      if (spec->value_name.empty()) {
        if (has_value) return absl::InvalidArgumentError(absl::StrCat("flag --", name, " takes no value"));
        value = "true";
      } else if (!has_value) {
        if (i + 1 >= argc) {
          return absl::InvalidArgumentError(absl::StrCat("flag --", name, " needs a value (", spec->value_name, ")"));
        }
        value = argv[++i];
      }
      if (!spec->repeated && args.values_.count(name)) {
        return absl::InvalidArgumentError(absl::StrCat("flag --", name, " given twice"));
      }
      args.values_[name].push_back(value);
    } else {
      args.positional_.push_back(a);
    }
  }
  return args;
}

std::string Usage(const std::string& command, const std::string& synopsis, const std::string& description,
                  const std::vector<FlagSpec>& flags) {
  std::string s = absl::StrCat("usage: tessel ", command, " ", synopsis, "\n\n", description, "\n");
  if (!flags.empty()) absl::StrAppend(&s, "\noptions:\n");
  for (const FlagSpec& f : flags) {
    std::string left = f.name.size() == 1 ? absl::StrCat("-", f.name, f.value_name.empty() ? "" : " " + f.value_name)
                                          : absl::StrCat("--", f.name, f.value_name.empty() ? "" : " " + f.value_name);
    std::string help = f.help;
    if (!f.default_value.empty()) absl::StrAppend(&help, " (default ", f.default_value, ")");
    if (f.repeated) absl::StrAppend(&help, " (repeatable)");
    absl::StrAppend(&s, absl::StrFormat("  %-26s %s\n", left, help));
  }
  absl::StrAppend(&s, absl::StrFormat("  %-26s %s\n", "-h, --help", "show this help"));
  return s;
}

int Fail(const std::string& command, const absl::Status& status) {
  std::fprintf(stderr, "tessel %s: %s\n", command.c_str(), std::string(status.message()).c_str());
  return 1;
}

absl::Status CheckOutputIsNotAnInput(const std::string& output, const std::vector<std::string>& inputs) {
  struct stat out;
  if (::stat(output.c_str(), &out) != 0 || !S_ISREG(out.st_mode)) return absl::OkStatus();
  for (const std::string& input : inputs) {
    struct stat in;
    if (::stat(input.c_str(), &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
      return absl::InvalidArgumentError(
          absl::StrCat("output '", output, "' is the input '", input, "'; write the result to another file"));
    }
  }
  return absl::OkStatus();
}

bool WantsHelp(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) return true;
  }
  return false;
}

}  // namespace tessel::cli
