// Recursive-descent JSON parser with a depth limit, UTF-16 surrogate handling in \u escapes, and
// line/column positions in errors.
#include "support/json.h"

#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tessel::json {
namespace {

constexpr int kMaxDepth = 512;

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

class Parser {
 public:
  Parser(absl::string_view text, absl::string_view what) : s_(text), what_(what) {}

  absl::StatusOr<Value> ParseDocument() {
    absl::StatusOr<Value> v = ParseValue(0);
    if (!v.ok()) return v;
    SkipSpace();
    if (pos_ != s_.size()) return Error("unexpected text after the JSON value");
    return v;
  }

 private:
  absl::Status Error(absl::string_view msg) const {
    int line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return absl::InvalidArgumentError(
        absl::StrCat(what_, ": ", msg, " at line ", line, ", column ", col, " (byte ", pos_, ")"));
  }

  void SkipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }

  bool Consume(absl::string_view lit) {
    if (s_.substr(pos_, lit.size()) == lit) {
      pos_ += lit.size();
      return true;
    }
    return false;
  }

  absl::StatusOr<Value> ParseValue(int depth) {
    if (depth > kMaxDepth) return Error("nesting is too deep");
    SkipSpace();
    if (pos_ >= s_.size()) return Error("unexpected end of input");
    const char c = s_[pos_];
    if (c == '{') return ParseObject(depth);
    if (c == '[') return ParseArray(depth);
    if (c == '"') {
      absl::StatusOr<std::string> str = ParseString();
      if (!str.ok()) return str.status();
      return Value::String(*std::move(str));
    }
    if (Consume("true")) return Value::Bool(true);
    if (Consume("false")) return Value::Bool(false);
    if (Consume("null")) return Value();
    if (c == '-' || (c >= '0' && c <= '9')) return ParseNumber();
    return Error(absl::StrCat("unexpected character '", std::string(1, c), "'"));
  }

  absl::StatusOr<Value> ParseNumber() {
    const size_t start = pos_;
    bool integral = true;
    if (s_[pos_] == '-') ++pos_;
    auto digits = [&] {
      const size_t d = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ > d;
    };
    if (!digits()) return Error("malformed number");
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      integral = false;
      if (!digits()) return Error("malformed number");
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      integral = false;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (!digits()) return Error("malformed number");
    }
    const absl::string_view tok = s_.substr(start, pos_ - start);
    double d = 0;
    if (!absl::SimpleAtod(tok, &d)) return Error("malformed number");
    int64_t i = 0;
    const bool is_int = integral && absl::SimpleAtoi(tok, &i);
    return Value::Number(d, is_int, i);
  }

  absl::StatusOr<uint32_t> ParseHex4() {
    if (pos_ + 4 > s_.size()) return Error("truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = s_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') {
        v |= c - '0';
      } else if (c >= 'a' && c <= 'f') {
        v |= c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        v |= c - 'A' + 10;
      } else {
        return Error("bad hex digit in \\u escape");
      }
    }
    return v;
  }

  absl::StatusOr<std::string> ParseString() {
    ++pos_;  // opening quote
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) return Error("unterminated string");
      const char c = s_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) return Error("control character in string");
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) return Error("unterminated string");
      const char e = s_[pos_++];
      switch (e) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
          absl::StatusOr<uint32_t> cp = ParseHex4();
          if (!cp.ok()) return cp.status();
          uint32_t code = *cp;
          if (code >= 0xD800 && code <= 0xDBFF) {
            if (!Consume("\\u")) return Error("unpaired UTF-16 surrogate in \\u escape");
            absl::StatusOr<uint32_t> lo = ParseHex4();
            if (!lo.ok()) return lo.status();
            if (*lo < 0xDC00 || *lo > 0xDFFF) return Error("unpaired UTF-16 surrogate in \\u escape");
            code = 0x10000 + ((code - 0xD800) << 10) + (*lo - 0xDC00);
          } else if (code >= 0xDC00 && code <= 0xDFFF) {
            return Error("unpaired UTF-16 surrogate in \\u escape");
          }
          AppendUtf8(code, &out);
          break;
        }
        default:
          return Error(absl::StrCat("bad escape '\\", std::string(1, e), "'"));
      }
    }
  }

  absl::StatusOr<Value> ParseArray(int depth) {
    ++pos_;
    std::vector<Value> items;
    SkipSpace();
    if (Consume("]")) return Value::Array(std::move(items));
    while (true) {
      absl::StatusOr<Value> v = ParseValue(depth + 1);
      if (!v.ok()) return v;
      items.push_back(*std::move(v));
      SkipSpace();
      if (Consume("]")) return Value::Array(std::move(items));
      if (!Consume(",")) return Error("expected ',' or ']'");
    }
  }

  absl::StatusOr<Value> ParseObject(int depth) {
    ++pos_;
    std::vector<std::pair<std::string, Value>> members;
    SkipSpace();
    if (Consume("}")) return Value::Object(std::move(members));
    while (true) {
      SkipSpace();
      if (pos_ >= s_.size() || s_[pos_] != '"') return Error("expected a string key");
      absl::StatusOr<std::string> key = ParseString();
      if (!key.ok()) return key.status();
      SkipSpace();
      if (!Consume(":")) return Error("expected ':'");
      absl::StatusOr<Value> v = ParseValue(depth + 1);
      if (!v.ok()) return v;
      members.emplace_back(*std::move(key), *std::move(v));
      SkipSpace();
      if (Consume("}")) return Value::Object(std::move(members));
      if (!Consume(",")) return Error("expected ',' or '}'");
    }
  }

  absl::string_view s_;
  absl::string_view what_;
  size_t pos_ = 0;
};

}  // namespace

Value Value::Bool(bool b) {
  Value v;
  v.kind_ = Kind::kBool;
  v.bool_ = b;
  return v;
}

Value Value::Number(double d, bool is_integer, int64_t integer) {
  Value v;
  v.kind_ = Kind::kNumber;
  v.number_ = d;
  v.is_integer_ = is_integer;
  v.integer_ = integer;
  return v;
}

Value Value::String(std::string s) {
  Value v;
  v.kind_ = Kind::kString;
  v.string_ = std::move(s);
  return v;
}

Value Value::Array(std::vector<Value> items) {
  Value v;
  v.kind_ = Kind::kArray;
  v.items_ = std::move(items);
  return v;
}

Value Value::Object(std::vector<std::pair<std::string, Value>> members) {
  Value v;
  v.kind_ = Kind::kObject;
  v.members_ = std::move(members);
  return v;
}

const Value* Value::Find(absl::string_view key) const {
  for (const auto& [k, v] : members_) {
    if (k == key) return &v;
  }
  return nullptr;
}

absl::StatusOr<Value> Parse(absl::string_view text, absl::string_view what) {
  return Parser(text, what).ParseDocument();
}

absl::string_view KindName(Value::Kind k) {
  switch (k) {
    case Value::Kind::kNull: return "null";
    case Value::Kind::kBool: return "a bool";
    case Value::Kind::kNumber: return "a number";
    case Value::Kind::kString: return "a string";
    case Value::Kind::kArray: return "an array";
    case Value::Kind::kObject: return "an object";
  }
  return "unknown";
}

}  // namespace tessel::json
