// A small JSON reader (RFC 8259) for the text files that ship beside model weights: safetensors
// headers, config.json, tokenizer.json. Objects keep their key order.
#ifndef TESSEL_SUPPORT_JSON_H_
#define TESSEL_SUPPORT_JSON_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tessel::json {

class Value {
 public:
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };

  Value() = default;
  static Value Bool(bool b);
  static Value Number(double d, bool is_integer, int64_t integer);
  static Value String(std::string s);
  static Value Array(std::vector<Value> items);
  static Value Object(std::vector<std::pair<std::string, Value>> members);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_number() const { return kind_ == Kind::kNumber; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_array() const { return kind_ == Kind::kArray; }
  bool is_object() const { return kind_ == Kind::kObject; }

  bool bool_value() const { return bool_; }
  double number() const { return number_; }
  // True for a number written without fraction or exponent that fits int64.
  bool is_integer() const { return kind_ == Kind::kNumber && is_integer_; }
  int64_t integer() const { return integer_; }
  const std::string& str() const { return string_; }
  const std::vector<Value>& items() const { return items_; }
  const std::vector<std::pair<std::string, Value>>& members() const { return members_; }
  // Member lookup (objects only; nullptr when absent or not an object).
  const Value* Find(absl::string_view key) const;

 private:
  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  bool is_integer_ = false;
  double number_ = 0;
  int64_t integer_ = 0;
  std::string string_;
  std::vector<Value> items_;
  std::vector<std::pair<std::string, Value>> members_;
};

// `what` names the source in errors ("config.json: expected ',' or '}' at line 3, column 7").
absl::StatusOr<Value> Parse(absl::string_view text, absl::string_view what = "JSON");

// "string", "number", ... for error messages.
absl::string_view KindName(Value::Kind k);

}  // namespace tessel::json

#endif  // TESSEL_SUPPORT_JSON_H_
