// Pass options, context and registry.
#include "passes/core/pass.h"

#include <cctype>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tessel {

const std::vector<std::string>* PassOptions::Find(const std::string& key) const {
  for (const auto& [k, v] : values_) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::vector<std::string> PassOptions::GetList(const std::string& key, std::vector<std::string> def) const {
  const std::vector<std::string>* v = Find(key);
  return v ? *v : def;
}

absl::StatusOr<int64_t> PassOptions::GetInt(const std::string& key, int64_t def) const {
  const std::vector<std::string>* v = Find(key);
  if (v == nullptr) return def;
  int64_t out;
  if (v->size() != 1 || !absl::SimpleAtoi((*v)[0], &out)) {
    return absl::InvalidArgumentError(absl::StrCat("option '", key, "' expects an integer, got '", absl::StrJoin(*v, ","), "'"));
  }
  return out;
}

absl::StatusOr<bool> PassOptions::GetBool(const std::string& key, bool def) const {
  const std::vector<std::string>* v = Find(key);
  if (v == nullptr) return def;
  bool out;
  if (v->size() != 1 || !absl::SimpleAtob((*v)[0], &out)) {
    return absl::InvalidArgumentError(absl::StrCat("option '", key, "' expects true or false, got '", absl::StrJoin(*v, ","), "'"));
  }
  return out;
}

absl::StatusOr<double> PassOptions::GetDouble(const std::string& key, double def) const {
  const std::vector<std::string>* v = Find(key);
  if (v == nullptr) return def;
  double out;
  if (v->size() != 1 || !absl::SimpleAtod((*v)[0], &out)) {
    return absl::InvalidArgumentError(absl::StrCat("option '", key, "' expects a number, got '", absl::StrJoin(*v, ","), "'"));
  }
  return out;
}

void PassContext::Explain(const std::string& message) {
  if (explain_) explanations_.push_back(message);
}

PassRegistry& PassRegistry::Global() {
  // Leaked on purpose: trivially destructible global, usable from static initializers.
  static PassRegistry* registry = new PassRegistry();
  return *registry;
}

absl::Status PassRegistry::Register(PassInfo info) {
  if (info.name.empty() || info.create == nullptr) {
    return absl::InvalidArgumentError("a pass needs a name and a factory");
  }
  for (char c : info.name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) {
      return absl::InvalidArgumentError(absl::StrCat("pass name '", info.name, "' may only use letters, digits, '-' and '_'"));
    }
  }
  if (passes_.count(info.name)) return absl::AlreadyExistsError(absl::StrCat("pass '", info.name, "' is already registered"));
  const std::string name = info.name;
  passes_.emplace(name, std::move(info));
  return absl::OkStatus();
}

const PassInfo* PassRegistry::Find(const std::string& name) const {
  auto it = passes_.find(name);
  return it == passes_.end() ? nullptr : &it->second;
}

std::vector<const PassInfo*> PassRegistry::All() const {
  std::vector<const PassInfo*> out;
  for (const auto& [name, info] : passes_) out.push_back(&info);
  return out;
}

absl::Status CheckOptionNames(const PassInfo& info, const PassOptions& options) {
  for (const auto& [key, value] : options.values()) {
    bool known = false;
    for (const PassOptionSpec& spec : info.options) known |= spec.name == key;
    if (!known) {
      std::vector<std::string> names;
      for (const PassOptionSpec& spec : info.options) names.push_back(spec.name);
      return absl::InvalidArgumentError(absl::StrCat("pass '", info.name, "' has no option '", key, "'",
                                                     names.empty() ? " (it takes none)"
                                                                   : absl::StrCat(" (options: ", absl::StrJoin(names, ", "), ")")));
    }
  }
  return absl::OkStatus();
}

}  // namespace tessel
