// Pass infrastructure: a Pass transforms a Graph in place; every pass is registered by a short name
// with a one-line summary and its options, and reports statistics (what it changed) and, when asked,
// why it declined to change something.
#ifndef TESSEL_PASSES_CORE_PASS_H_
#define TESSEL_PASSES_CORE_PASS_H_

#include <functional>
#include <map>
#include <utility>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace tessel {

// Options as given in a pipeline string: `name{key=value,list=a,b}`. Values are kept as text; a
// pass reads them with the typed getters, which fail on malformed values.
class PassOptions {
 public:
  using Entries = std::vector<std::pair<std::string, std::vector<std::string>>>;
  PassOptions() = default;
  // Keys keep the order they were written in, so that pipelines print back unchanged.
  explicit PassOptions(Entries values) : values_(std::move(values)) {}
  bool Has(const std::string& key) const { return Find(key) != nullptr; }
  const Entries& values() const { return values_; }
  bool empty() const { return values_.empty(); }
  bool operator==(const PassOptions& o) const { return values_ == o.values_; }
  std::vector<std::string> GetList(const std::string& key, std::vector<std::string> def) const;
  absl::StatusOr<int64_t> GetInt(const std::string& key, int64_t def) const;
  absl::StatusOr<bool> GetBool(const std::string& key, bool def) const;
  absl::StatusOr<double> GetDouble(const std::string& key, double def) const;

 private:
  const std::vector<std::string>* Find(const std::string& key) const;
  Entries values_;
};

// What a run of the pipeline shares with each pass.
class PassContext {
 public:
  // Counts, e.g. stat("nodes-fused") += 1; printed by --stats.
  int64_t& stat(const std::string& name) { return stats_[name]; }
  const std::map<std::string, int64_t>& stats() const { return stats_; }
  void ClearStats() { stats_.clear(); }
  // Records why a transformation did not apply ("conv_12 not fused: output has 2 users"); kept only
  // when explanations were requested.
  void Explain(const std::string& message);
  bool explain() const { return explain_; }
  void set_explain(bool on) { explain_ = on; }
  const std::vector<std::string>& explanations() const { return explanations_; }

 private:
  std::map<std::string, int64_t> stats_;
  bool explain_ = false;
  std::vector<std::string> explanations_;
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual absl::Status Run(Graph& graph, PassContext& ctx) = 0;
};

struct PassOptionSpec {
  std::string name;
  std::string help;
  std::string default_value;  // as text
};

struct PassInfo {
  std::string name;     // e.g. "fold-constants"
  std::string summary;  // one line
  std::vector<PassOptionSpec> options;
  // Creates the pass; fails on unknown or malformed options.
  std::function<absl::StatusOr<std::unique_ptr<Pass>>(const PassOptions&)> create;
};

class PassRegistry {
 public:
  // The process-wide registry with every built-in pass; other repositories add theirs with Register
  // (or the TESSEL_REGISTER_PASS macro).
  static PassRegistry& Global();
  absl::Status Register(PassInfo info);
  const PassInfo* Find(const std::string& name) const;
  std::vector<const PassInfo*> All() const;

 private:
  std::map<std::string, PassInfo> passes_;
};

// Checks `options` only has keys declared in `info`.
absl::Status CheckOptionNames(const PassInfo& info, const PassOptions& options);

// For passes without options: a PassInfo whose factory makes a T.
template <typename T>
PassInfo SimplePassInfo(std::string name, std::string summary) {
  PassInfo info;
  info.name = std::move(name);
  info.summary = std::move(summary);
  info.create = [](const PassOptions&) -> absl::StatusOr<std::unique_ptr<Pass>> { return std::unique_ptr<Pass>(new T()); };
  return info;
}

// Registers a pass at static-initialization time from a library linked with alwayslink = 1:
//   TESSEL_REGISTER_PASS(my_pass, tessel::SimplePassInfo<MyPass>("my-pass", "does a thing"));
#define TESSEL_REGISTER_PASS(ident, info_expr)                                             \
  static const bool tessel_pass_registered_##ident = [] {                                 \
    absl::Status s = ::tessel::PassRegistry::Global().Register(info_expr);                \
    return s.ok();                                                                        \
  }()

}  // namespace tessel

#endif  // TESSEL_PASSES_CORE_PASS_H_
