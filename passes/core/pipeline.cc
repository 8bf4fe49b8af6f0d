// Pipeline text parsing, printing and expansion.
#include "passes/core/pipeline.h"

#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tessel {
namespace {

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; }

class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text) {}

  absl::StatusOr<std::vector<PassSpec>> Parse() {
    std::vector<PassSpec> specs;
    SkipSpace();
    if (pos_ == text_.size()) return specs;
    while (true) {
      PassSpec spec;
      auto name = Name("pass name");
      if (!name.ok()) return name.status();
      spec.name = *name;
      SkipSpace();
      if (Peek() == '{') {
        ++pos_;
        auto options = Options();
        if (!options.ok()) return options.status();
        spec.options = PassOptions(std::move(*options));
      }
      specs.push_back(std::move(spec));
      SkipSpace();
      if (pos_ == text_.size()) break;
      if (Peek() != ',') return Error("expected ',' between passes");
      ++pos_;
      SkipSpace();
    }
    return specs;
  }

 private:
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("pipeline '", text_, "': ", what, " at offset ", pos_,
                                                   pos_ < text_.size() ? absl::StrCat(" ('", text_.substr(pos_, 1), "')")
                                                                       : std::string(" (end of text)")));
  }
  absl::StatusOr<std::string> Name(absl::string_view what) {
    const size_t start = pos_;
    while (pos_ < text_.size() && IsNameChar(text_[pos_])) ++pos_;
    if (pos_ == start) return Error(absl::StrCat("expected a ", what));
    return std::string(text_.substr(start, pos_ - start));
  }
  // Option values: any characters except ',', '{', '}', '=' and spaces.
  absl::StatusOr<std::string> OptionValue() {
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '}' && text_[pos_] != '{' && text_[pos_] != '=' &&
           !std::isspace(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
    if (pos_ == start) return Error("expected an option value");
    return std::string(text_.substr(start, pos_ - start));
  }
  // After '{': key=value[,value...][,key=value...]}
  absl::StatusOr<PassOptions::Entries> Options() {
    PassOptions::Entries entries;
    SkipSpace();
    if (Peek() == '}') return Error("empty option list");
    while (true) {
      SkipSpace();
      const size_t item_start = pos_;
      auto word = OptionValue();
      if (!word.ok()) return word.status();
      SkipSpace();
      if (Peek() == '=') {
        for (char c : *word) {
          if (!IsNameChar(c)) {
            pos_ = item_start;
            return Error("malformed option name");
          }
        }
        for (const auto& [k, v] : entries) {
          if (k == *word) {
            pos_ = item_start;
            return Error(absl::StrCat("option '", *word, "' given twice"));
          }
        }
        ++pos_;
        SkipSpace();
        auto value = OptionValue();
        if (!value.ok()) return value.status();
        entries.push_back({*word, {*value}});
      } else {
        if (entries.empty()) {
          pos_ = item_start;
          return Error("expected key=value");
        }
        entries.back().second.push_back(*word);
      }
      SkipSpace();
      if (Peek() == '}') {
        ++pos_;
        return entries;
      }
      if (Peek() != ',') return Error("expected ',' or '}' in options");
      ++pos_;
    }
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<std::vector<PassSpec>> ParsePipeline(absl::string_view text) { return Parser(text).Parse(); }

std::string PrintPipeline(const std::vector<PassSpec>& specs) {
  std::string out;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (i > 0) out += ",";
    out += specs[i].name;
    if (!specs[i].options.empty()) {
      out += "{";
      bool first = true;
      for (const auto& [key, values] : specs[i].options.values()) {
        if (!first) out += ",";
        first = false;
        absl::StrAppend(&out, key, "=", absl::StrJoin(values, ","));
      }
      out += "}";
    }
  }
  return out;
}

const std::vector<std::pair<std::string, std::string>>& NamedPipelines() {
  static const auto* pipelines = new std::vector<std::pair<std::string, std::string>>{
      {"O0", ""},
      {"O1", "fold-shape-ops,fold-constants,simplify,dce"},
      {"O2", "O1,cse,fold-batchnorm,fuse-conv-add,fuse-conv-activation,fuse-matmul-bias-gelu,dce"},
      {"O3", "O2,fuse-depthwise-pointwise,transformer,layout,fuse-expansion,dce"},
      {"cnn", "fold-shape-ops,fold-constants,simplify,cse,fold-batchnorm,fuse-conv-add,fuse-conv-activation,"
              "fuse-depthwise-pointwise,layout,fuse-expansion,dce"},
      {"transformer", "fuse-rmsnorm,fuse-layernorm,fuse-rope,fuse-attention,pack-qkv,fold-rmsnorm-gain,dce"},
      {"llm", "fold-shape-ops,fold-constants,simplify,cse,transformer,fuse-matmul-bias-gelu,dce"},
  };
  return *pipelines;
}

absl::StatusOr<std::vector<PassSpec>> ExpandPipeline(const std::vector<PassSpec>& specs) {
  std::vector<PassSpec> out;
  for (const PassSpec& spec : specs) {
    const std::string* named = nullptr;
    for (const auto& [name, text] : NamedPipelines()) {
      if (name == spec.name) named = &text;
    }
    if (named != nullptr) {
      if (!spec.options.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("named pipeline '", spec.name, "' takes no options"));
      }
      auto inner = ParsePipeline(*named);
      if (!inner.ok()) return inner.status();
      auto expanded = ExpandPipeline(*inner);
      if (!expanded.ok()) return expanded.status();
      out.insert(out.end(), expanded->begin(), expanded->end());
      continue;
    }
    if (PassRegistry::Global().Find(spec.name) == nullptr) {
      std::vector<std::string> names;
      for (const PassInfo* p : PassRegistry::Global().All()) names.push_back(p->name);
      for (const auto& [name, text] : NamedPipelines()) names.push_back(name);
      return absl::NotFoundError(absl::StrCat("unknown pass '", spec.name, "'; known: ", absl::StrJoin(names, ", ")));
    }
    out.push_back(spec);
  }
  return out;
}

}  // namespace tessel
