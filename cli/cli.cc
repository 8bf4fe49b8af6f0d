// Command-line parsing for the tessel subcommands.
#include "cli/cli.h"

#include <sys/stat.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace tessel::cli {

Range Range::ExcludingLow() const {
  Range r = *this;
  r.lo_excluded = true;
  return r;
}

Range Range::ExcludingHigh() const {
  Range r = *this;
  r.hi_excluded = true;
  return r;
}

bool Range::Contains(double v) const {
  return std::isfinite(v) && (lo_excluded ? v > lo : v >= lo) && (hi_excluded ? v < hi : v <= hi);
}

std::string Range::Describe() const {
  const bool has_lo = std::isfinite(lo), has_hi = std::isfinite(hi);
  if (has_lo && has_hi) {
    return absl::StrCat("in ", lo_excluded ? "(" : "[", lo, ", ", hi, hi_excluded ? ")" : "]");
  }
  if (has_lo) return absl::StrCat(lo_excluded ? "> " : ">= ", lo);
  if (has_hi) return absl::StrCat(hi_excluded ? "< " : "<= ", hi);
  return "";
}

std::string FlagName(const std::string& name) { return absl::StrCat(name.size() == 1 ? "-" : "--", name); }

std::string Args::Get(const std::string& name) const {
  auto it = values_.find(name);
  if (it != values_.end() && !it->second.empty()) return it->second.back();
  auto spec = specs_.find(name);
  return spec == specs_.end() ? "" : spec->second.default_value;
}

const std::vector<std::string>& Args::GetAll(const std::string& name) const {
  static const std::vector<std::string>* empty = new std::vector<std::string>();
  auto it = values_.find(name);
  return it == values_.end() ? *empty : it->second;
}

absl::Status Args::CheckRange(const std::string& name, double v, const std::string& text) const {
  auto spec = specs_.find(name);
  const Range range = spec == specs_.end() ? Range() : spec->second.range;
  if (range.Contains(v)) return absl::OkStatus();
  std::string want = range.Describe();
  if (!std::isfinite(v)) want = want.empty() ? "a finite number" : absl::StrCat("a finite number ", want);
  return absl::InvalidArgumentError(absl::StrCat(FlagName(name), " must be ", want, ", not ", text));
}

absl::StatusOr<int64_t> Args::GetInt(const std::string& name) const {
  int64_t v;
  const std::string s = Get(name);
  if (!absl::SimpleAtoi(s, &v)) {
    return absl::InvalidArgumentError(absl::StrCat(FlagName(name), " expects an integer, got '", s, "'"));
  }
  if (absl::Status range = CheckRange(name, static_cast<double>(v), s); !range.ok()) return range;
  return v;
}

absl::StatusOr<double> Args::GetDouble(const std::string& name) const {
  double v;
  const std::string s = Get(name);
  if (!absl::SimpleAtod(s, &v)) {
    return absl::InvalidArgumentError(absl::StrCat(FlagName(name), " expects a number, got '", s, "'"));
  }
  if (absl::Status range = CheckRange(name, v, s); !range.ok()) return range;
  return v;
}

absl::StatusOr<Args> Parse(const std::string& command, const std::vector<FlagSpec>& flags, int argc, char** argv) {
  Args args;
  for (const FlagSpec& f : flags) args.specs_[f.name] = f;
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
    const std::string left = absl::StrCat(FlagName(f.name), f.value_name.empty() ? "" : " " + f.value_name);
    std::string help = f.help;
    std::vector<std::string> notes;  // "(N in [1, 256]; default 1)"
    if (const std::string range = f.range.Describe(); !range.empty()) notes.push_back(f.value_name + " " + range);
    if (!f.default_value.empty()) notes.push_back("default " + f.default_value);
    if (!notes.empty()) absl::StrAppend(&help, " (", absl::StrJoin(notes, "; "), ")");
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
