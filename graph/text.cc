// Printer and recursive-descent parser for the graph text form described in text.h.
#include "graph/text.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace tessel {
namespace {

// Status plumbing for the parser, whose every step can fail (this Abseil has no such macros).
#define TEXT_RETURN_IF_ERROR(expr)     \
  do {                                 \
    absl::Status status_ = (expr);     \
    if (!status_.ok()) return status_; \
  } while (0)
#define TEXT_CONCAT_INNER(a, b) a##b
#define TEXT_CONCAT(a, b) TEXT_CONCAT_INNER(a, b)
#define TEXT_ASSIGN_OR_RETURN(lhs, expr) TEXT_ASSIGN_OR_RETURN_IMPL(TEXT_CONCAT(statusor_, __LINE__), lhs, expr)
#define TEXT_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(*tmp)

// ---------------------------------------------------------------------------------------------
// Lexical classes shared by printer and parser, so that what prints bare also parses bare.

bool IsIdentStart(char c) { return absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) { return IsIdentChar(c) || c == '.' || c == ':' || c == '/' || c == '-'; }
bool IsSymbolStart(char c) { return IsIdentStart(c) || c == '?'; }
bool IsSymbolChar(char c) { return IsIdentChar(c) || c == '?'; }

bool IsIdentifier(absl::string_view s) {
  if (s.empty() || !IsIdentStart(s[0])) return false;
  for (char c : s) {
    if (!IsIdentChar(c)) return false;
  }
  return true;
}

// A trailing ':' stays out of bare names so that `%x: f32[]` reads as the name "x" and a colon.
bool IsBareName(absl::string_view s) {
  if (s.empty() || s.back() == ':') return false;
  for (char c : s) {
    if (!IsNameChar(c)) return false;
  }
  return true;
}

bool IsBareSymbol(absl::string_view s) {
  if (s.empty() || !IsSymbolStart(s[0])) return false;
  for (char c : s) {
    if (!IsSymbolChar(c)) return false;
  }
  return true;
}

bool IsDottedIdentifier(absl::string_view s) {
  for (absl::string_view part : absl::StrSplit(s, '.')) {
    if (!IsIdentifier(part)) return false;
  }
  return true;
}

bool IsStatementKeyword(absl::string_view s) { return s == "input" || s == "const" || s == "output"; }

// ---------------------------------------------------------------------------------------------
// Floating-point elements, as bit patterns of their own width (f32: 32 bits, f16/bf16: 16 bits).

uint32_t SignBit(DType t) { return t == DType::kF32 ? 0x80000000u : 0x8000u; }
uint32_t InfBits(DType t) { return t == DType::kF32 ? 0x7f800000u : t == DType::kF16 ? 0x7c00u : 0x7f80u; }
uint32_t CanonicalNaN(DType t) { return t == DType::kF32 ? 0x7fc00000u : t == DType::kF16 ? 0x7e00u : 0x7fc0u; }

float BitsToFloat(uint32_t bits, DType t) {
  if (t == DType::kF16) return HalfToFloat(static_cast<uint16_t>(bits));
  if (t == DType::kBF16) return BF16ToFloat(static_cast<uint16_t>(bits));
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

bool IsNaNBits(uint32_t bits, DType t) {
  const uint32_t magnitude = bits & ~SignBit(t);
  const uint32_t width_mask = t == DType::kF32 ? 0xffffffffu : 0xffffu;
  return (bits & ~width_mask) == 0 && magnitude > InfBits(t);
}

// A finite decimal read as the nearest value of type t. The printer uses this same function to
// find the shortest text that reads back to the same bits.
absl::StatusOr<uint32_t> DecimalToBits(absl::string_view s, DType t) {
  const char* first = s.data();
  const char* last = s.data() + s.size();
  if (first != last && *first == '+') ++first;
  float f = 0;
  const std::from_chars_result r = std::from_chars(first, last, f);
  if (r.ec == std::errc::result_out_of_range) {
    return absl::OutOfRangeError(absl::StrCat("'", s, "' is out of range for ", DTypeName(t)));
  }
  if (r.ec != std::errc() || r.ptr != last) {
    return absl::InvalidArgumentError(absl::StrCat("malformed number '", s, "'"));
  }
  uint32_t bits;
  if (t == DType::kF32) {
    std::memcpy(&bits, &f, 4);
    return bits;
  }
  bits = t == DType::kF16 ? FloatToHalf(f) : FloatToBF16(f);
  if ((bits & ~SignBit(t)) == InfBits(t)) {
    return absl::OutOfRangeError(absl::StrCat("'", s, "' is out of range for ", DTypeName(t)));
  }
  return bits;
}

bool HasFloatMarker(absl::string_view s) {
  return s.find_first_of(".eEn") != absl::string_view::npos;  // 'n' covers inf and nan
}

std::string FormatFloatBits(uint32_t bits, DType t) {
  const float v = BitsToFloat(bits, t);
  if (std::isnan(v)) {
    if (bits == CanonicalNaN(t)) return "nan";
    if (bits == (CanonicalNaN(t) | SignBit(t))) return "-nan";
    return absl::StrFormat("nan(0x%0*x)", t == DType::kF32 ? 8 : 4, bits);
  }
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  std::string best;
  if (t == DType::kF32) {
    // Shortest text that reads back to the same float.
    const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), v);
    best.assign(buf, r.ptr);
    if (!HasFloatMarker(best)) best += ".0";
    return best;
  }
  // f16/bf16 values are exact floats, but their shortest text is shorter than the float's: try each
  // precision and keep the shortest text that reads back to the same 16 bits. Precision 9 always does.
  for (int precision = 1; precision <= 9; ++precision) {
    const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general, precision);
    std::string candidate(buf, r.ptr);
    const absl::StatusOr<uint32_t> back = DecimalToBits(candidate, t);
    if (!back.ok() || *back != bits) continue;
    if (!HasFloatMarker(candidate)) candidate += ".0";
    if (best.empty() || candidate.size() < best.size()) best = std::move(candidate);
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// Printer.

void AppendQuoted(std::string* out, absl::string_view s) {
  out->push_back('"');
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '\\': out->append("\\\\"); break;
      case '"': out->append("\\\""); break;
      case '\n': out->append("\\n"); break;
      case '\t': out->append("\\t"); break;
      case '\r': out->append("\\r"); break;
      default:
        if (c < 0x20 || c == 0x7f) {
          absl::StrAppendFormat(out, "\\x%02x", c);
        } else {
          out->push_back(ch);
        }
    }
  }
  out->push_back('"');
}

void AppendName(std::string* out, char sigil, absl::string_view name) {
  out->push_back(sigil);
  if (IsBareName(name)) {
    out->append(name.data(), name.size());
  } else {
    AppendQuoted(out, name);
  }
}

std::string ValueRef(absl::string_view name) {
  std::string s;
  AppendName(&s, '%', name);
  return s;
}

void AppendType(std::string* out, const TensorType& type) {
  absl::StrAppend(out, DTypeName(type.dtype), "[");
  for (size_t i = 0; i < type.dims.size(); ++i) {
    if (i > 0) out->push_back(',');
    const Dim& d = type.dims[i];
    if (d.is_static()) {
      absl::StrAppend(out, d.value());
    } else if (IsBareSymbol(d.symbol())) {
      out->append(d.symbol());
    } else {
      AppendQuoted(out, d.symbol());
    }
  }
  out->push_back(']');
  if (type.layout != Layout::kAny) absl::StrAppend(out, "@", LayoutName(type.layout));
}

std::string TypeString(const TensorType& type) {
  std::string s;
  AppendType(&s, type);
  return s;
}

// Element i of an integer tensor's bytes `raw` as decimal text.
template <typename T>
std::string IntText(const unsigned char* raw, int64_t i) {
  T v;
  std::memcpy(&v, raw + sizeof(T) * i, sizeof(T));
  return absl::StrCat(v);
}

std::string FormatElement(const Tensor& t, int64_t i) {
  const unsigned char* raw = static_cast<const unsigned char*>(t.raw_data());
  // memcpy throughout: borrowed buffers may sit at any offset.
  switch (t.dtype()) {
    case DType::kF32: {
      uint32_t bits;
      std::memcpy(&bits, raw + 4 * i, 4);
      return FormatFloatBits(bits, DType::kF32);
    }
    case DType::kF16:
    case DType::kBF16: {
      uint16_t bits;
      std::memcpy(&bits, raw + 2 * i, 2);
      return FormatFloatBits(bits, t.dtype());
    }
    case DType::kI8: return absl::StrCat(static_cast<int8_t>(raw[i]));
    case DType::kU8: return absl::StrCat(raw[i]);
    case DType::kI16: return IntText<int16_t>(raw, i);
    case DType::kU16: return IntText<uint16_t>(raw, i);
    case DType::kI32: return IntText<int32_t>(raw, i);
    case DType::kU32: return IntText<uint32_t>(raw, i);
    case DType::kI64: return IntText<int64_t>(raw, i);
    case DType::kU64: return IntText<uint64_t>(raw, i);
    case DType::kF64: {
      double v;
      uint64_t bits;
      std::memcpy(&v, raw + 8 * i, 8);
      std::memcpy(&bits, raw + 8 * i, 8);
      if (std::isnan(v)) {
        const uint64_t quiet = (uint64_t{0xfff} << 51);
        if ((bits & ~(uint64_t{1} << 63)) == quiet) return bits >> 63 ? "-nan" : "nan";
        return absl::StrFormat("nan(0x%016x)", bits);
      }
      if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
      // Shortest text that reads back to the same double.
      char buf[64];
      const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), v);
      std::string text(buf, r.ptr);
      if (!HasFloatMarker(text)) text += ".0";
      return text;
    }
    case DType::kBool:
      // Bytes other than 0 and 1 print as numbers so that they survive the round trip.
      return raw[i] == 0 ? "false" : raw[i] == 1 ? "true" : absl::StrCat(raw[i]);
    case DType::kI4: {
      const int nibble = (i % 2 == 0) ? (raw[i / 2] & 0xf) : (raw[i / 2] >> 4);
      return absl::StrCat(nibble >= 8 ? nibble - 16 : nibble);
    }
  }
  return "?";
}

void AppendData(std::string* out, const Tensor& t, const PrintOptions& options) {
  const int64_t n = t.num_elements();
  if (options.elide_large_constants && n > options.max_inline_elements) {
    absl::StrAppend(out, "<elided ", n, " elements>");
    return;
  }
  out->push_back('[');
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) out->append(", ");
    out->append(FormatElement(t, i));
  }
  out->push_back(']');
}

void AppendAttribute(std::string* out, const Attribute& a, const PrintOptions& options) {
  auto float_text = [](float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return FormatFloatBits(bits, DType::kF32);
  };
  switch (a.kind) {
    case Attribute::Kind::kInt: absl::StrAppend(out, a.i); return;
    case Attribute::Kind::kFloat: out->append(float_text(a.f)); return;
    case Attribute::Kind::kString: AppendQuoted(out, a.s); return;
    case Attribute::Kind::kInts:
      if (a.ints.empty()) {
        out->append("ints[]");
      } else {
        absl::StrAppend(out, "[", absl::StrJoin(a.ints, ", "), "]");
      }
      return;
    case Attribute::Kind::kFloats:
      if (a.floats.empty()) {
        out->append("floats[]");
        return;
      }
      out->push_back('[');
      for (size_t i = 0; i < a.floats.size(); ++i) {
        if (i > 0) out->append(", ");
        out->append(float_text(a.floats[i]));
      }
      out->push_back(']');
      return;
    case Attribute::Kind::kStrings:
      if (a.strings.empty()) {
        out->append("strings[]");
        return;
      }
      out->push_back('[');
      for (size_t i = 0; i < a.strings.size(); ++i) {
        if (i > 0) out->append(", ");
        AppendQuoted(out, a.strings[i]);
      }
      out->push_back(']');
      return;
    case Attribute::Kind::kTensor:
      if (a.t == nullptr) {
        out->append("tensor<null>");
        return;
      }
      out->append("tensor<");
      AppendType(out, a.t->type());
      out->push_back(' ');
      AppendData(out, *a.t, options);
      out->push_back('>');
      return;
    case Attribute::Kind::kGraph:
      // Shown, not parsed back: the text IR has no syntax for subgraphs.
      out->append("graph<");
      out->append(a.g ? absl::StrCat(a.g->inputs().size(), " inputs, ", a.g->nodes().size(), " nodes, ",
                                     a.g->outputs().size(), " outputs")
                      : "null");
      out->push_back('>');
      return;
  }
}

void AppendOpRef(std::string* out, const Node& n) {
  if (!n.domain().empty()) {
    if (IsDottedIdentifier(n.domain())) {
      out->append(n.domain());
    } else {
      AppendQuoted(out, n.domain());
    }
    out->push_back('.');
  }
  // A node without results starts its statement with the op type, which must not read as a keyword.
  const bool keyword_clash = n.domain().empty() && n.num_outputs() == 0 && IsStatementKeyword(n.op_type());
  if (IsIdentifier(n.op_type()) && !keyword_clash) {
    out->append(n.op_type());
  } else {
    AppendQuoted(out, n.op_type());
  }
}

void AppendNode(std::string* out, const Node& n, const PrintOptions& options) {
  out->append("  ");
  if (n.num_outputs() > 0) {
    for (int i = 0; i < n.num_outputs(); ++i) {
      if (i > 0) out->append(", ");
      AppendName(out, '%', n.output(i)->name());
    }
    out->append(" = ");
  }
  AppendOpRef(out, n);
  out->push_back(' ');
  AppendQuoted(out, n.name());
  out->append(" (");
  for (int i = 0; i < n.num_inputs(); ++i) {
    if (i > 0) out->append(", ");
    if (n.input(i) == nullptr) {
      out->push_back('_');
    } else {
      AppendName(out, '%', n.input(i)->name());
    }
  }
  out->push_back(')');
  if (!n.attributes().empty()) {
    out->append(" {");
    bool first = true;
    for (const auto& [name, attr] : n.attributes()) {
      if (!first) out->append(", ");
      first = false;
      if (IsIdentifier(name)) {
        out->append(name);
      } else {
        AppendQuoted(out, name);
      }
      out->append(" = ");
      AppendAttribute(out, attr, options);
    }
    out->push_back('}');
  }
  if (n.num_outputs() > 0) {
    out->append(" : ");
    for (int i = 0; i < n.num_outputs(); ++i) {
      if (i > 0) out->append(", ");
      AppendType(out, n.output(i)->type());
    }
  }
  out->push_back('\n');
}

// ---------------------------------------------------------------------------------------------
// Parser.

// A lexed number: decimal integer, decimal float, inf or nan (optionally with explicit bits).
struct Number {
  enum class Kind { kInt, kFloat, kInf, kNaN };
  size_t pos = 0;
  absl::string_view text;
  Kind kind = Kind::kInt;
  bool negative = false;
  bool has_bits = false;  // nan(0x...)
  uint64_t bits = 0;
};

class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text), graph_(std::make_unique<Graph>()) {}

  absl::StatusOr<std::unique_ptr<Graph>> Parse() {
    SkipSpace();
    if (!PeekKeyword("graph")) return Expected("'graph' at the start of the text");
    pos_ += 5;
    std::string name;
    TEXT_ASSIGN_OR_RETURN(name, ParseName('@', "the graph name after 'graph'"));
    graph_->set_name(name);
    TEXT_RETURN_IF_ERROR(Expect('{', "to open the graph body"));
    while (true) {
      SkipSpace();
      if (AtEnd()) return Expected("'}' to close the graph body");
      if (Consume('}')) break;
      absl::Status s;
      if (Peek() == '%') {
        s = ParseNode(/*with_results=*/true);
      } else if (PeekKeyword("input")) {
        s = ParseInput();
      } else if (PeekKeyword("const")) {
        s = ParseConst();
      } else if (PeekKeyword("output")) {
        s = ParseOutput();
      } else if (Peek() == '"' || IsIdentStart(Peek())) {
        s = ParseNode(/*with_results=*/false);
      } else {
        return Expected("a statement (input, const, output or a node)");
      }
      TEXT_RETURN_IF_ERROR(s);
    }
    SkipSpace();
    if (!AtEnd()) return Expected("end of input after the graph's closing '}'");
    return std::move(graph_);
  }

 private:
  // ----- characters and tokens

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  char PeekAt(size_t p) const { return p < text_.size() ? text_[p] : '\0'; }

  void SkipSpace() {
    while (!AtEnd()) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (c == '#') {
        while (!AtEnd() && text_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  bool Consume(char c) {
    SkipSpace();
    if (AtEnd() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  // The word kw stands next, not as the start of a longer word or a dotted op type.
  bool PeekKeyword(absl::string_view kw) {
    SkipSpace();
    if (!absl::StartsWith(text_.substr(pos_), kw)) return false;
    const char next = PeekAt(pos_ + kw.size());
    return !IsIdentChar(next) && next != '.';
  }

  absl::Status ErrorAt(size_t pos, absl::string_view message) const {
    pos = std::min(pos, text_.size());
    int line = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < pos; ++i) {
      if (text_[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    return absl::InvalidArgumentError(
        absl::StrFormat("line %d, column %d: %s", line, static_cast<int>(pos - line_start) + 1, message));
  }

  std::string Found() const {
    if (AtEnd()) return "end of input";
    const char c = text_[pos_];
    if (IsIdentChar(c)) {
      size_t end = pos_;
      while (end < text_.size() && IsIdentChar(text_[end]) && end - pos_ < 24) ++end;
      return absl::StrCat("'", text_.substr(pos_, end - pos_), "'");
    }
    const unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) return absl::StrCat("'", absl::string_view(&c, 1), "'");
    return absl::StrFormat("byte 0x%02x", u);
  }

  absl::Status Expected(absl::string_view what) {
    SkipSpace();
    return ErrorAt(pos_, absl::StrCat("expected ", what, ", found ", Found()));
  }

  absl::Status Expect(char c, absl::string_view context) {
    if (Consume(c)) return absl::OkStatus();
    return Expected(absl::StrCat("'", absl::string_view(&c, 1), "' ", context));
  }

  absl::StatusOr<std::string> ParseString(absl::string_view what) {
    SkipSpace();
    if (Peek() != '"') return Expected(absl::StrCat(what, " as a quoted string"));
    const size_t start = pos_++;
    std::string out;
    while (true) {
      if (AtEnd() || Peek() == '\n') return ErrorAt(start, "unterminated string (a string ends on its own line)");
      const char c = text_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      const size_t escape_pos = pos_ - 1;
      const char e = Peek();
      ++pos_;
      switch (e) {
        case '\\': out.push_back('\\'); break;
        case '"': out.push_back('"'); break;
        case 'n': out.push_back('\n'); break;
        case 't': out.push_back('\t'); break;
        case 'r': out.push_back('\r'); break;
        case 'x': {
          int value = 0;
          for (int k = 0; k < 2; ++k) {
            const char h = PeekAt(pos_);
            if (!absl::ascii_isxdigit(static_cast<unsigned char>(h))) {
              return ErrorAt(escape_pos, "'\\x' takes exactly two hex digits");
            }
            value = value * 16 + (absl::ascii_isdigit(static_cast<unsigned char>(h)) ? h - '0' : (h | 0x20) - 'a' + 10);
            ++pos_;
          }
          out.push_back(static_cast<char>(value));
          break;
        }
        default: return ErrorAt(escape_pos, "unknown escape in string (use \\\\, \\\", \\n, \\t, \\r or \\xHH)");
      }
    }
  }

  absl::StatusOr<std::string> ParseIdentifier(absl::string_view what) {
    SkipSpace();
    if (!IsIdentStart(Peek())) return Expected(what);
    const size_t start = pos_;
    while (IsIdentChar(Peek())) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  // `@name` / `%name` or their quoted forms.
  absl::StatusOr<std::string> ParseName(char sigil, absl::string_view what) {
    SkipSpace();
    if (Peek() != sigil) return Expected(absl::StrCat("'", absl::string_view(&sigil, 1), "' and ", what));
    ++pos_;
    if (Peek() == '"') return ParseString(what);
    const size_t start = pos_;
    while (IsNameChar(Peek())) ++pos_;
    while (pos_ > start && text_[pos_ - 1] == ':') --pos_;
    if (pos_ == start) return Expected(what);
    return std::string(text_.substr(start, pos_ - start));
  }

  absl::StatusOr<Number> LexNumber(absl::string_view what) {
    SkipSpace();
    Number n;
    n.pos = pos_;
    size_t p = pos_;
    if (PeekAt(p) == '+' || PeekAt(p) == '-') {
      n.negative = PeekAt(p) == '-';
      ++p;
    }
    const absl::string_view rest = text_.substr(p);
    if (absl::StartsWith(rest, "inf") && !IsIdentChar(PeekAt(p + 3))) {
      n.kind = Number::Kind::kInf;
      p += 3;
    } else if (absl::StartsWith(rest, "nan") && !IsIdentChar(PeekAt(p + 3))) {
      n.kind = Number::Kind::kNaN;
      p += 3;
      if (PeekAt(p) == '(') {
        if (n.negative) return ErrorAt(n.pos, "a NaN with explicit bits takes no sign (the bits hold it)");
        ++p;
        if (PeekAt(p) != '0' || PeekAt(p + 1) != 'x') return ErrorAt(p, "expected '0x' and hex bits after 'nan('");
        p += 2;
        const size_t hex_start = p;
        while (absl::ascii_isxdigit(static_cast<unsigned char>(PeekAt(p)))) ++p;
        if (p == hex_start || p - hex_start > 16 ||
            !absl::SimpleHexAtoi(text_.substr(hex_start, p - hex_start), &n.bits)) {
          return ErrorAt(hex_start, "expected 1 to 16 hex digits of NaN bits (8 for f32, f16 and bf16)");
        }
        if (PeekAt(p) != ')') return ErrorAt(p, "expected ')' after the NaN bits");
        ++p;
        n.has_bits = true;
      }
    } else {
      int digits = 0;
      while (absl::ascii_isdigit(static_cast<unsigned char>(PeekAt(p)))) ++p, ++digits;
      if (PeekAt(p) == '.') {
        n.kind = Number::Kind::kFloat;
        ++p;
        while (absl::ascii_isdigit(static_cast<unsigned char>(PeekAt(p)))) ++p, ++digits;
      }
      if (digits == 0) {
        if (p == pos_) return Expected(what);
        return MalformedNumber(n.pos, p);
      }
      if (PeekAt(p) == 'e' || PeekAt(p) == 'E') {
        n.kind = Number::Kind::kFloat;
        ++p;
        if (PeekAt(p) == '+' || PeekAt(p) == '-') ++p;
        int exponent_digits = 0;
        while (absl::ascii_isdigit(static_cast<unsigned char>(PeekAt(p)))) ++p, ++exponent_digits;
        if (exponent_digits == 0) return MalformedNumber(n.pos, p);
      }
    }
    if (IsIdentChar(PeekAt(p)) || PeekAt(p) == '.') return MalformedNumber(n.pos, p);
    n.text = text_.substr(n.pos, p - n.pos);
    pos_ = p;
    return n;
  }

  absl::Status MalformedNumber(size_t start, size_t p) const {
    while (p < text_.size() && (IsIdentChar(text_[p]) || text_[p] == '.' || text_[p] == '+' || text_[p] == '-') &&
           p - start < 40) {
      ++p;
    }
    return ErrorAt(start, absl::StrCat("malformed number '", text_.substr(start, p - start), "'"));
  }

  absl::StatusOr<int64_t> ToInt64(const Number& n, absl::string_view what) const {
    if (n.kind != Number::Kind::kInt) {
      return ErrorAt(n.pos, absl::StrCat("expected an integer for ", what, ", found '", n.text, "'"));
    }
    int64_t v;
    if (!absl::SimpleAtoi(n.text, &v)) {
      return ErrorAt(n.pos, absl::StrCat("integer '", n.text, "' does not fit in 64 bits"));
    }
    return v;
  }

  absl::StatusOr<uint32_t> ToFloatBits(const Number& n, DType t) const {
    switch (n.kind) {
      case Number::Kind::kInf: return InfBits(t) | (n.negative ? SignBit(t) : 0);
      case Number::Kind::kNaN:
        if (!n.has_bits) return CanonicalNaN(t) | (n.negative ? SignBit(t) : 0);
        if (n.bits > 0xffffffffu || !IsNaNBits(static_cast<uint32_t>(n.bits), t)) {
          return ErrorAt(n.pos, absl::StrCat("'", n.text, "' is not the bit pattern of a ", DTypeName(t), " NaN"));
        }
        return static_cast<uint32_t>(n.bits);
      case Number::Kind::kInt:
      case Number::Kind::kFloat: {
        absl::StatusOr<uint32_t> bits = DecimalToBits(n.text, t);
        if (!bits.ok()) return ErrorAt(n.pos, bits.status().message());
        return *bits;
      }
    }
    return ErrorAt(n.pos, "unreachable number kind");
  }

  // An f64 element's 64 bits: decimals read as the nearest double, inf, nan and nan(0x...) as for f32.
  absl::StatusOr<uint64_t> ToDoubleBits(const Number& n) const {
    constexpr uint64_t kSign = uint64_t{1} << 63, kInf = uint64_t{0x7ff} << 52, kNaN = kInf | (uint64_t{1} << 51);
    switch (n.kind) {
      case Number::Kind::kInf: return kInf | (n.negative ? kSign : 0);
      case Number::Kind::kNaN:
        if (!n.has_bits) return kNaN | (n.negative ? kSign : 0);
        if ((n.bits & ~kSign & kInf) != kInf || (n.bits & ~kSign) == kInf) {
          return ErrorAt(n.pos, absl::StrCat("'", n.text, "' is not the bit pattern of an f64 NaN"));
        }
        return n.bits;
      case Number::Kind::kInt:
      case Number::Kind::kFloat: {
        const char* first = n.text.data();
        const char* last = first + n.text.size();
        if (first != last && *first == '+') ++first;
        double d = 0;
        const std::from_chars_result r = std::from_chars(first, last, d);
        if (r.ec == std::errc::result_out_of_range) {
          return ErrorAt(n.pos, absl::StrCat("'", n.text, "' is out of range for f64"));
        }
        if (r.ec != std::errc() || r.ptr != last) return ErrorAt(n.pos, absl::StrCat("malformed number '", n.text, "'"));
        uint64_t bits;
        std::memcpy(&bits, &d, 8);
        return bits;
      }
    }
    return ErrorAt(n.pos, "unreachable number kind");
  }

  // ----- types

  absl::StatusOr<TensorType> ParseType(absl::string_view what) {
    SkipSpace();
    const size_t start = pos_;
    std::string dtype_name;
    TEXT_ASSIGN_OR_RETURN(dtype_name, ParseIdentifier(absl::StrCat(what, " (a type such as f32[1,3])")));
    const absl::StatusOr<DType> dtype = ParseDType(dtype_name);
    if (!dtype.ok()) return ErrorAt(start, dtype.status().message());
    TensorType type;
    type.dtype = *dtype;
    TEXT_RETURN_IF_ERROR(Expect('[', absl::StrCat("after the dtype of ", what)));
    if (!Consume(']')) {
      while (true) {
        SkipSpace();
        const char c = Peek();
        if (absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+') {
          Number n;
          TEXT_ASSIGN_OR_RETURN(n, LexNumber("a dimension"));
          int64_t extent;
          TEXT_ASSIGN_OR_RETURN(extent, ToInt64(n, "a dimension"));
          type.dims.emplace_back(extent);
        } else if (c == '"') {
          const size_t symbol_pos = pos_;
          std::string symbol;
          TEXT_ASSIGN_OR_RETURN(symbol, ParseString("a dimension symbol"));
          if (symbol.empty()) return ErrorAt(symbol_pos, "a dimension symbol must not be empty");
          type.dims.push_back(Dim::Symbol(std::move(symbol)));
        } else if (IsSymbolStart(c)) {
          const size_t symbol_start = pos_;
          while (IsSymbolChar(Peek())) ++pos_;
          type.dims.push_back(Dim::Symbol(std::string(text_.substr(symbol_start, pos_ - symbol_start))));
        } else {
          return Expected(absl::StrCat("a dimension (an extent or a symbol) in the type of ", what));
        }
        if (Consume(',')) continue;
        if (Consume(']')) break;
        return Expected(absl::StrCat("',' or ']' after a dimension in the type of ", what));
      }
    }
    if (Consume('@')) {
      const size_t layout_pos = pos_;
      std::string layout_name;
      TEXT_ASSIGN_OR_RETURN(layout_name, ParseIdentifier(absl::StrCat("a layout after '@' in the type of ", what)));
      const absl::StatusOr<Layout> layout = ParseLayout(layout_name);
      if (!layout.ok()) return ErrorAt(layout_pos, layout.status().message());
      type.layout = *layout;
    }
    return type;
  }

  // ----- tensor data

  // `what` names the element for messages ("an element of constant %w"); `int_what` the integer
  // data ("the i8 data of constant %w"). Both are built once per tensor, not per element.
  absl::StatusOr<uint64_t> ParseElement(DType t, absl::string_view what, absl::string_view int_what) {
    if (t == DType::kBool) {
      if (PeekKeyword("true")) {
        pos_ += 4;
        return 1;
      }
      if (PeekKeyword("false")) {
        pos_ += 5;
        return 0;
      }
    }
    Number n;
    TEXT_ASSIGN_OR_RETURN(n, LexNumber(what));
    if (t == DType::kF64) return ToDoubleBits(n);
    if (IsFloat(t)) return ToFloatBits(n, t);
    if (t == DType::kU64) {  // the whole unsigned range, past int64's
      uint64_t u;
      if (n.kind != Number::Kind::kInt || !absl::SimpleAtoi(n.text, &u)) {
        return ErrorAt(n.pos, absl::StrCat("element '", n.text, "' is not a u64 (0..18446744073709551615)"));
      }
      return u;
    }
    int64_t v;
    TEXT_ASSIGN_OR_RETURN(v, ToInt64(n, int_what));
    int64_t lo = std::numeric_limits<int64_t>::min();
    int64_t hi = std::numeric_limits<int64_t>::max();
    switch (t) {
      case DType::kI8: lo = -128, hi = 127; break;
      case DType::kU8:
      case DType::kBool: lo = 0, hi = 255; break;
      case DType::kI32: lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max(); break;
      case DType::kI16: lo = -32768, hi = 32767; break;
      case DType::kU16: lo = 0, hi = 65535; break;
      case DType::kU32: lo = 0, hi = std::numeric_limits<uint32_t>::max(); break;
      case DType::kI4: lo = -8, hi = 7; break;
      default: break;
    }
    if (v < lo || v > hi) {
      return ErrorAt(n.pos,
                     absl::StrCat("element ", v, " is out of range for ", DTypeName(t), " (", lo, "..", hi, ")"));
    }
    return static_cast<uint64_t>(v);
  }

  // `[e0, e1, ...]` for a static type; `what` names the owner for messages ("constant %w").
  absl::StatusOr<Tensor> ParseData(const TensorType& type, size_t type_pos, absl::string_view what) {
    std::vector<int64_t> shape;
    bool has_zero = false;
    for (const Dim& d : type.dims) {
      if (!d.is_static()) {
        return ErrorAt(type_pos, absl::StrCat(what, " needs a static type; dimension '", d.symbol(), "' is symbolic"));
      }
      if (d.value() < 0) return ErrorAt(type_pos, absl::StrCat(what, " has a negative dimension ", d.value()));
      has_zero |= d.value() == 0;
      shape.push_back(d.value());
    }
    int64_t count = 1;
    if (has_zero) {
      count = 0;
    } else {
      for (int64_t d : shape) {
        if (count > std::numeric_limits<int64_t>::max() / d) {
          return ErrorAt(type_pos, absl::StrCat(what, " has more elements than fit in 64 bits"));
        }
        count *= d;
      }
    }
    SkipSpace();
    const size_t data_pos = pos_;
    if (absl::StartsWith(text_.substr(pos_), "<elided")) {
      return ErrorAt(data_pos, absl::StrCat("the data of ", what,
                                            " was elided when printing; print without elide_large_constants "
                                            "to get text that parses"));
    }
    TEXT_RETURN_IF_ERROR(Expect('[', absl::StrCat("to start the data of ", what)));
    const std::string element_what = absl::StrCat("an element of ", what);
    const std::string int_what = absl::StrCat("the ", DTypeName(type.dtype), " data of ", what);
    std::vector<uint64_t> elements;
    if (!Consume(']')) {
      while (true) {
        uint64_t e;
        TEXT_ASSIGN_OR_RETURN(e, ParseElement(type.dtype, element_what, int_what));
        elements.push_back(e);
        if (Consume(',')) continue;
        if (Consume(']')) break;
        return Expected(absl::StrCat("',' or ']' between the elements of ", what));
      }
    }
    if (static_cast<int64_t>(elements.size()) != count) {
      return ErrorAt(data_pos, absl::StrCat(what, " has type ", TypeString(type), " (", count, " elements) but ",
                                            elements.size(), " elements are given"));
    }
    Tensor tensor(type.dtype, shape);
    unsigned char* raw = static_cast<unsigned char*>(tensor.raw_data());
    for (size_t i = 0; i < elements.size(); ++i) {
      const uint64_t e = elements[i];
      switch (type.dtype) {
        case DType::kF32:
        case DType::kI32:
        case DType::kU32: {
          const uint32_t v = static_cast<uint32_t>(e);
          std::memcpy(raw + 4 * i, &v, 4);
          break;
        }
        case DType::kF16:
        case DType::kBF16:
        case DType::kI16:
        case DType::kU16: {
          const uint16_t v = static_cast<uint16_t>(e);
          std::memcpy(raw + 2 * i, &v, 2);
          break;
        }
        case DType::kI8:
        case DType::kU8:
        case DType::kBool: raw[i] = static_cast<unsigned char>(e); break;
        case DType::kI64:
        case DType::kU64:
        case DType::kF64: std::memcpy(raw + 8 * i, &e, 8); break;
        case DType::kI4: raw[i / 2] |= static_cast<unsigned char>((e & 0xf) << (4 * (i % 2))); break;
      }
    }
    return tensor;
  }

  // ----- attributes

  absl::StatusOr<Attribute> ParseAttributeValue(absl::string_view what) {
    SkipSpace();
    const char c = Peek();
    if (c == '"') {
      std::string s;
      TEXT_ASSIGN_OR_RETURN(s, ParseString(what));
      return Attribute::String(std::move(s));
    }
    if (c == '[') {
      const size_t list_pos = pos_++;
      SkipSpace();
      if (Peek() == ']') {
        return ErrorAt(list_pos, absl::StrCat("the empty list of ", what,
                                              " needs its element type: write ints[], floats[] or strings[]"));
      }
      if (Peek() == '"') {
        std::vector<std::string> strings;
        while (true) {
          std::string s;
          TEXT_ASSIGN_OR_RETURN(s, ParseString(absl::StrCat("a string in ", what)));
          strings.push_back(std::move(s));
          if (Consume(',')) continue;
          if (Consume(']')) break;
          return Expected(absl::StrCat("',' or ']' in the string list of ", what));
        }
        return Attribute::Strings(std::move(strings));
      }
      std::vector<Number> numbers;
      bool any_float = false;
      while (true) {
        Number n;
        TEXT_ASSIGN_OR_RETURN(n, LexNumber(absl::StrCat("a number or string in the list of ", what)));
        any_float |= n.kind != Number::Kind::kInt;
        numbers.push_back(n);
        if (Consume(',')) continue;
        if (Consume(']')) break;
        return Expected(absl::StrCat("',' or ']' in the list of ", what));
      }
      // One float element makes the whole list floats, so `[1, 2.5]` reads as written.
      if (any_float) {
        std::vector<float> floats;
        for (const Number& n : numbers) {
          uint32_t bits;
          TEXT_ASSIGN_OR_RETURN(bits, ToFloatBits(n, DType::kF32));
          floats.push_back(BitsToFloat(bits, DType::kF32));
        }
        return Attribute::Floats(std::move(floats));
      }
      std::vector<int64_t> ints;
      for (const Number& n : numbers) {
        int64_t v;
        TEXT_ASSIGN_OR_RETURN(v, ToInt64(n, what));
        ints.push_back(v);
      }
      return Attribute::Ints(std::move(ints));
    }
    for (absl::string_view marker : {"ints", "floats", "strings"}) {
      if (!PeekKeyword(marker)) continue;
      pos_ += marker.size();
      TEXT_RETURN_IF_ERROR(Expect('[', absl::StrCat("after '", marker, "' in ", what)));
      TEXT_RETURN_IF_ERROR(
          Expect(']', absl::StrCat("after '", marker, "[' (a type marker only starts an empty list)")));
      if (marker == "ints") return Attribute::Ints({});
      if (marker == "floats") return Attribute::Floats({});
      return Attribute::Strings({});
    }
    if (PeekKeyword("tensor")) {
      pos_ += 6;
      TEXT_RETURN_IF_ERROR(Expect('<', absl::StrCat("after 'tensor' in ", what)));
      Attribute a;
      a.kind = Attribute::Kind::kTensor;
      if (PeekKeyword("null")) {
        pos_ += 4;
      } else {
        SkipSpace();
        const size_t type_pos = pos_;
        TensorType type;
        TEXT_ASSIGN_OR_RETURN(type, ParseType(what));
        if (type.layout != Layout::kAny) {
          return ErrorAt(type_pos, absl::StrCat("the tensor of ", what, " takes no layout"));
        }
        Tensor t;
        TEXT_ASSIGN_OR_RETURN(t, ParseData(type, type_pos, what));
        a.t = std::make_shared<const Tensor>(std::move(t));
      }
      TEXT_RETURN_IF_ERROR(Expect('>', absl::StrCat("to close the tensor of ", what)));
      return a;
    }
    Number n;
    TEXT_ASSIGN_OR_RETURN(n, LexNumber(absl::StrCat("the value of ", what)));
    if (n.kind == Number::Kind::kInt) {
      int64_t v;
      TEXT_ASSIGN_OR_RETURN(v, ToInt64(n, what));
      return Attribute::Int(v);
    }
    uint32_t bits;
    TEXT_ASSIGN_OR_RETURN(bits, ToFloatBits(n, DType::kF32));
    return Attribute::Float(BitsToFloat(bits, DType::kF32));
  }

  // ----- values and statements

  absl::StatusOr<Value*> ParseValueRef(absl::string_view what) {
    SkipSpace();
    const size_t start = pos_;
    std::string name;
    TEXT_ASSIGN_OR_RETURN(name, ParseName('%', what));
    Value* v = graph_->FindValue(name);
    if (v == nullptr) {
      return ErrorAt(start, absl::StrCat("unknown value ", ValueRef(name), " (a value is defined before its uses)"));
    }
    return v;
  }

  // Checks a new value name at `pos` and remembers where it was defined.
  absl::Status Define(const std::string& name, size_t pos) {
    if (name.empty()) return ErrorAt(pos, "a value name must not be empty");
    auto it = defined_at_.find(name);
    if (it != defined_at_.end()) {
      return ErrorAt(pos, absl::StrCat("redefinition of value ", ValueRef(name), " (first defined on line ",
                                       LineOf(it->second), ")"));
    }
    defined_at_[name] = pos;
    return absl::OkStatus();
  }

  int LineOf(size_t pos) const {
    int line = 1;
    for (size_t i = 0; i < pos && i < text_.size(); ++i) line += text_[i] == '\n';
    return line;
  }

  absl::Status ParseInput() {
    pos_ += 5;  // "input"
    SkipSpace();
    const size_t name_pos = pos_;
    std::string name;
    TEXT_ASSIGN_OR_RETURN(name, ParseName('%', "the input's name after 'input'"));
    TEXT_RETURN_IF_ERROR(Define(name, name_pos));
    const std::string what = absl::StrCat("input ", ValueRef(name));
    TEXT_RETURN_IF_ERROR(Expect(':', absl::StrCat("and the type after ", what)));
    TensorType type;
    TEXT_ASSIGN_OR_RETURN(type, ParseType(what));
    graph_->AddInput(name, std::move(type));
    return absl::OkStatus();
  }

  absl::Status ParseConst() {
    pos_ += 5;  // "const"
    SkipSpace();
    const size_t name_pos = pos_;
    std::string name;
    TEXT_ASSIGN_OR_RETURN(name, ParseName('%', "the constant's name after 'const'"));
    TEXT_RETURN_IF_ERROR(Define(name, name_pos));
    const std::string what = absl::StrCat("constant ", ValueRef(name));
    TEXT_RETURN_IF_ERROR(Expect(':', absl::StrCat("and the type after ", what)));
    SkipSpace();
    const size_t type_pos = pos_;
    TensorType type;
    TEXT_ASSIGN_OR_RETURN(type, ParseType(what));
    TEXT_RETURN_IF_ERROR(Expect('=', absl::StrCat("and the data after the type of ", what)));
    Tensor data;
    TEXT_ASSIGN_OR_RETURN(data, ParseData(type, type_pos, what));
    Value* v = graph_->AddConstant(name, std::move(data));
    // The data knows no layout; a stated one lives on the value.
    v->set_type(std::move(type));
    return absl::OkStatus();
  }

  absl::Status ParseOutput() {
    SkipSpace();
    const size_t start = pos_;
    pos_ += 6;  // "output"
    if (seen_output_) {
      return ErrorAt(start,
                     absl::StrCat("a second output line (one line lists every graph output; the first is on line ",
                                  LineOf(output_pos_), ")"));
    }
    seen_output_ = true;
    output_pos_ = start;
    while (true) {
      Value* v;
      TEXT_ASSIGN_OR_RETURN(v, ParseValueRef("a graph output's name"));
      graph_->AddOutput(v);
      if (!Consume(',')) break;
    }
    return absl::OkStatus();
  }

  // `domain.Op`, `Op` or quoted parts; the last part is the op type.
  absl::Status ParseOpRef(std::string* domain, std::string* op_type) {
    std::vector<std::string> parts;
    SkipSpace();
    while (true) {
      std::string part;
      if (Peek() == '"') {
        TEXT_ASSIGN_OR_RETURN(part, ParseString("an op type"));
      } else {
        TEXT_ASSIGN_OR_RETURN(part, ParseIdentifier(parts.empty() ? "an op type" : "an op type after '.'"));
      }
      parts.push_back(std::move(part));
      if (Peek() != '.') break;
      ++pos_;
    }
    *op_type = std::move(parts.back());
    parts.pop_back();
    *domain = absl::StrJoin(parts, ".");
    return absl::OkStatus();
  }

  absl::Status ParseNode(bool with_results) {
    std::vector<std::string> results;
    std::vector<size_t> result_pos;
    if (with_results) {
      while (true) {
        SkipSpace();
        const size_t name_pos = pos_;
        std::string name;
        TEXT_ASSIGN_OR_RETURN(name, ParseName('%', "a result name"));
        TEXT_RETURN_IF_ERROR(Define(name, name_pos));
        results.push_back(std::move(name));
        result_pos.push_back(name_pos);
        if (!Consume(',')) break;
      }
      TEXT_RETURN_IF_ERROR(Expect('=', "or ',' after the node's result names"));
    }
    std::string domain;
    std::string op_type;
    TEXT_RETURN_IF_ERROR(ParseOpRef(&domain, &op_type));
    std::string node_name;
    TEXT_ASSIGN_OR_RETURN(node_name, ParseString(absl::StrCat("the node name after op type ", op_type)));
    std::string node_ref;
    AppendQuoted(&node_ref, node_name);
    node_ref = absl::StrCat("node ", node_ref);

    TEXT_RETURN_IF_ERROR(Expect('(', absl::StrCat("to open the inputs of ", node_ref)));
    std::vector<Value*> inputs;
    if (!Consume(')')) {
      while (true) {
        SkipSpace();
        if (Peek() == '_' && !IsNameChar(PeekAt(pos_ + 1))) {
          ++pos_;
          inputs.push_back(nullptr);
        } else {
          Value* v;
          TEXT_ASSIGN_OR_RETURN(v, ParseValueRef(absl::StrCat("an input name (or '_') of ", node_ref)));
          inputs.push_back(v);
        }
        if (Consume(',')) continue;
        if (Consume(')')) break;
        return Expected(absl::StrCat("',' or ')' after an input of ", node_ref));
      }
    }

    std::map<std::string, Attribute> attrs;
    if (Consume('{')) {
      if (!Consume('}')) {
        while (true) {
          SkipSpace();
          const size_t attr_pos = pos_;
          std::string attr_name;
          if (Peek() == '"') {
            TEXT_ASSIGN_OR_RETURN(attr_name, ParseString("an attribute name"));
          } else {
            TEXT_ASSIGN_OR_RETURN(attr_name, ParseIdentifier(absl::StrCat("an attribute name of ", node_ref)));
          }
          if (attrs.count(attr_name)) {
            return ErrorAt(attr_pos, absl::StrCat("attribute '", attr_name, "' of ", node_ref, " is given twice"));
          }
          const std::string what = absl::StrCat("attribute '", attr_name, "' of ", node_ref);
          TEXT_RETURN_IF_ERROR(Expect('=', absl::StrCat("after ", what)));
          Attribute a;
          TEXT_ASSIGN_OR_RETURN(a, ParseAttributeValue(what));
          attrs.emplace(std::move(attr_name), std::move(a));
          if (Consume(',')) continue;
          if (Consume('}')) break;
          return Expected(absl::StrCat("',' or '}' after ", what));
        }
      }
    }

    std::vector<TensorType> types;
    if (with_results) {
      TEXT_RETURN_IF_ERROR(Expect(':', absl::StrCat("and the output types of ", node_ref)));
      for (size_t i = 0; i < results.size(); ++i) {
        if (i > 0) {
          TEXT_RETURN_IF_ERROR(
              Expect(',', absl::StrCat("and another output type (", node_ref, " has ", results.size(), " results)")));
        }
        TensorType t;
        TEXT_ASSIGN_OR_RETURN(t, ParseType(absl::StrCat("result ", ValueRef(results[i]))));
        types.push_back(std::move(t));
      }
      SkipSpace();
      if (Peek() == ',') {
        return ErrorAt(pos_, absl::StrCat("more output types than results (", results.size(), ") for ", node_ref));
      }
    } else {
      SkipSpace();
      if (Peek() == ':') return ErrorAt(pos_, absl::StrCat(node_ref, " has no results, so it takes no output types"));
    }

    Node* node = graph_->AddNode(op_type, inputs, static_cast<int>(results.size()), node_name, results);
    node->set_name(node_name);  // AddNode invents a name for an empty one
    node->set_domain(std::move(domain));
    for (auto& [k, a] : attrs) node->SetAttr(k, std::move(a));
    for (size_t i = 0; i < types.size(); ++i) node->output(static_cast<int>(i))->set_type(std::move(types[i]));
    return absl::OkStatus();
  }

  absl::string_view text_;
  size_t pos_ = 0;
  std::unique_ptr<Graph> graph_;
  absl::flat_hash_map<std::string, size_t> defined_at_;
  bool seen_output_ = false;
  size_t output_pos_ = 0;
};

#undef TEXT_ASSIGN_OR_RETURN_IMPL
#undef TEXT_ASSIGN_OR_RETURN
#undef TEXT_CONCAT
#undef TEXT_CONCAT_INNER
#undef TEXT_RETURN_IF_ERROR

}  // namespace

std::string PrintGraph(const Graph& g, const PrintOptions& options) {
  std::string out = "graph ";
  AppendName(&out, '@', g.name());
  out.append(" {\n");
  for (const Value* v : g.inputs()) {
    out.append("  input ");
    AppendName(&out, '%', v->name());
    out.append(" : ");
    AppendType(&out, v->type());
    out.push_back('\n');
  }
  for (const auto& v : g.values()) {
    if (!v->is_constant()) continue;
    out.append("  const ");
    AppendName(&out, '%', v->name());
    out.append(" : ");
    AppendType(&out, v->type());
    out.append(" = ");
    AppendData(&out, *v->constant(), options);
    out.push_back('\n');
  }
  // Topological order lets the text define every value before its uses; a cyclic graph (which the
  // parser rejects) still prints, in list order, for debugging.
  absl::StatusOr<std::vector<Node*>> order = g.TopologicalOrder();
  if (order.ok()) {
    for (const Node* n : *order) AppendNode(&out, *n, options);
  } else {
    for (const auto& n : g.nodes()) AppendNode(&out, *n, options);
  }
  if (!g.outputs().empty()) {
    out.append("  output ");
    for (size_t i = 0; i < g.outputs().size(); ++i) {
      if (i > 0) out.append(", ");
      AppendName(&out, '%', g.outputs()[i]->name());
    }
    out.push_back('\n');
  }
  out.append("}\n");
  return out;
}

absl::StatusOr<std::unique_ptr<Graph>> ParseGraph(absl::string_view text) { return Parser(text).Parse(); }

}  // namespace tessel
