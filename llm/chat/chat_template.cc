// The Jinja-subset renderer: the source is cut into text and tags (whitespace control, trim_blocks and
// lstrip_blocks applied there), tags are parsed into one tree of statements and expressions, and
// Render walks the tree over nlohmann::json values (the messages are JSON already; a discarded json
// value stands for Jinja's undefined).
#include "llm/chat/chat_template.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"

#define TESSEL_CHAT_ASSIGN(lhs, expr)      \
  auto lhs##_or = (expr);                  \
  if (!lhs##_or.ok()) return lhs##_or.status(); \
  auto lhs = *std::move(lhs##_or)
#define TESSEL_CHAT_RETURN_IF_ERROR(expr)       \
  do {                                          \
    absl::Status _s = (expr);                   \
    if (!_s.ok()) return _s;                    \
  } while (0)

namespace tessel::llm {
namespace chat_internal {

using Json = nlohmann::json;

enum class Kind {
  // Statements.
  kBlock, kText, kOutput, kIf, kFor, kSet,
  // Expressions.
  kLiteral, kName, kAttr, kItem, kSlice, kCall, kFilter, kTest, kNot, kNeg, kBinary, kAnd, kOr, kCond, kList,
};

struct Node {
  Kind kind;
  size_t offset = 0;
  std::string text;                // text, name, operator, attribute, filter, test
  std::vector<std::string> names;  // for-loop targets; call keyword names (parallel to kids after the callee)
  Json value;                      // literal
  bool negate = false;             // `is not`
  std::vector<std::shared_ptr<Node>> kids;
};
using NodePtr = std::shared_ptr<Node>;

NodePtr MakeNode(Kind kind, size_t offset) {
  auto n = std::make_shared<Node>();
  n->kind = kind;
  n->offset = offset;
  return n;
}

// ---- The source cut into pieces --------------------------------------------------------------------

struct Piece {
  enum Type { kText, kExpr, kStmt } type;
  std::string text;
  size_t offset;  // of the text, or of the tag's first character
};

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

absl::StatusOr<std::vector<Piece>> Split(absl::string_view src) {
  std::vector<Piece> pieces;
  size_t pos = 0;
  bool strip_next = false;  // a `-%}` / `-}}` asked to strip the whitespace that follows
  while (pos <= src.size()) {
    size_t start = pos;
    while (true) {
      start = src.find('{', start);
      if (start == absl::string_view::npos || start + 1 >= src.size()) {
        start = absl::string_view::npos;
        break;
      }
      const char c = src[start + 1];
      if (c == '{' || c == '%' || c == '#') break;
      ++start;
    }
    std::string text(src.substr(pos, start == absl::string_view::npos ? absl::string_view::npos : start - pos));
    size_t text_offset = pos;
    if (strip_next) {
      size_t k = 0;
      while (k < text.size() && IsSpace(text[k])) ++k;
      text.erase(0, k);
      text_offset += k;
      strip_next = false;
    }
    if (start == absl::string_view::npos) {
      if (!text.empty()) pieces.push_back({Piece::kText, text, text_offset});
      break;
    }
    const char open = src[start + 1];
    const bool left_minus = start + 2 < src.size() && src[start + 2] == '-';
    if (left_minus) {
      while (!text.empty() && IsSpace(text.back())) text.pop_back();
    } else if (open != '{') {
      // lstrip_blocks: spaces and tabs between the start of a line and a block or comment tag go.
      size_t k = text.size();
      while (k > 0 && (text[k - 1] == ' ' || text[k - 1] == '\t')) --k;
      const bool line_start =
          k > 0 ? text[k - 1] == '\n' : text_offset == 0 || src[text_offset - 1] == '\n';
      if (line_start) text.erase(k);
    }
    if (!text.empty()) pieces.push_back({Piece::kText, text, text_offset});
    const char* close = open == '{' ? "}}" : open == '%' ? "%}" : "#}";
    size_t inner = start + 2 + (left_minus ? 1 : 0);
    size_t end = inner;
    char quote = 0;
    for (; end + 1 < src.size(); ++end) {
      const char c = src[end];
      if (open != '#') {
        if (quote) {
          if (c == '\\') ++end;
          else if (c == quote) quote = 0;
          continue;
        }
        if (c == '\'' || c == '"') {
          quote = c;
          continue;
        }
      }
      if (c == close[0] && src[end + 1] == close[1]) break;
    }
    if (end + 1 >= src.size()) {
      return absl::InvalidArgumentError(absl::StrCat("chat template: the tag at byte ", start, " is never closed ('",
                                                     close, "' missing)"));
    }
    const bool right_minus = end > inner && src[end - 1] == '-';
    const size_t inner_end = right_minus ? end - 1 : end;
    pos = end + 2;
    if (right_minus) {
      strip_next = true;
    } else if (open != '{') {
      // trim_blocks: the first newline after a block or comment tag goes.
      if (pos < src.size() && src[pos] == '\n') ++pos;
      else if (pos + 1 < src.size() && src[pos] == '\r' && src[pos + 1] == '\n') pos += 2;
    }
    if (open == '#') continue;
    pieces.push_back({open == '{' ? Piece::kExpr : Piece::kStmt, std::string(src.substr(inner, inner_end - inner)),
                      start});
  }
  return pieces;
}

// ---- Expression tokens -------------------------------------------------------------------------------

struct Token {
  enum Type { kName, kString, kInt, kFloat, kOp, kEnd } type;
  std::string text;
  int64_t i = 0;
  double f = 0;
  size_t offset;
};

absl::StatusOr<std::vector<Token>> Lex(absl::string_view s, size_t base) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (IsSpace(c)) {
      ++i;
      continue;
    }
    const size_t at = base + i;
    if (absl::ascii_isalpha(c) || c == '_') {
      size_t j = i;
      while (j < s.size() && (absl::ascii_isalnum(s[j]) || s[j] == '_')) ++j;
      out.push_back({Token::kName, std::string(s.substr(i, j - i)), 0, 0, at});
      i = j;
    } else if (absl::ascii_isdigit(c)) {
      size_t j = i;
      while (j < s.size() && absl::ascii_isdigit(s[j])) ++j;
      if (j + 1 < s.size() && s[j] == '.' && absl::ascii_isdigit(s[j + 1])) {
        ++j;
        while (j < s.size() && absl::ascii_isdigit(s[j])) ++j;
        out.push_back({Token::kFloat, "", 0, std::strtod(std::string(s.substr(i, j - i)).c_str(), nullptr), at});
      } else {
        out.push_back({Token::kInt, "", std::strtoll(std::string(s.substr(i, j - i)).c_str(), nullptr, 10), 0, at});
      }
      i = j;
    } else if (c == '\'' || c == '"') {
      std::string v;
      size_t j = i + 1;
      for (; j < s.size() && s[j] != c; ++j) {
        if (s[j] != '\\' || j + 1 == s.size()) {
          v += s[j];
          continue;
        }
        const char e = s[++j];
        switch (e) {
          case 'n': v += '\n'; break;
          case 't': v += '\t'; break;
          case 'r': v += '\r'; break;
          case '\\': v += '\\'; break;
          case '\'': v += '\''; break;
          case '"': v += '"'; break;
          default: v += '\\'; v += e;
        }
      }
      if (j >= s.size()) return absl::InvalidArgumentError(absl::StrCat("chat template: unterminated string at byte ", at));
      out.push_back({Token::kString, v, 0, 0, at});
      i = j + 1;
    } else {
      static const char* kOps[] = {"==", "!=", "<=", ">=", "//", "**", "<", ">", "+", "-", "*", "/", "%", "~",
                                   "|",  ".",  "[",  "]",  "(",  ")",  ",", ":", "=", "{", "}"};
      bool found = false;
      for (const char* op : kOps) {
        if (s.substr(i).substr(0, std::strlen(op)) == op) {
          out.push_back({Token::kOp, op, 0, 0, at});
          i += std::strlen(op);
          found = true;
          break;
        }
      }
      if (!found) {
        return absl::InvalidArgumentError(absl::StrCat("chat template: unexpected character '", std::string(1, c),
                                                       "' at byte ", at));
      }
    }
  }
  out.push_back({Token::kEnd, "", 0, 0, base + s.size()});
  return out;
}

// ---- Expression parser (precedence climbing) ----------------------------------------------------------

class ExprParser {
 public:
  explicit ExprParser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  const Token& Peek(size_t k = 0) const { return t_[std::min(p_ + k, t_.size() - 1)]; }
  bool AtEnd() const { return Peek().type == Token::kEnd; }
  bool IsOp(const char* op, size_t k = 0) const { return Peek(k).type == Token::kOp && Peek(k).text == op; }
  bool IsName(const char* name, size_t k = 0) const { return Peek(k).type == Token::kName && Peek(k).text == name; }
  const Token& Next() { return t_[std::min(p_++, t_.size() - 1)]; }
  absl::Status Expect(const char* op) {
    if (!IsOp(op)) return Error(absl::StrCat("expected '", op, "'"));
    ++p_;
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> ExpectName() {
    if (Peek().type != Token::kName) return Error("expected a name");
    return Next().text;
  }
  absl::Status Error(const std::string& what) const {
    const Token& t = Peek();
    const std::string near = t.type == Token::kEnd ? "the end of the tag" : absl::StrCat("'", t.text, "'");
    return absl::InvalidArgumentError(absl::StrCat("chat template: ", what, " at byte ", t.offset, " (near ", near, ")"));
  }

  absl::StatusOr<NodePtr> Expression() {
    TESSEL_CHAT_ASSIGN(a, Or());
    if (!IsName("if")) return a;
    const size_t at = Next().offset;
    TESSEL_CHAT_ASSIGN(cond, Or());
    NodePtr other = MakeNode(Kind::kLiteral, at);
    other->value = Json(Json::value_t::discarded);
    if (IsName("else")) {
      Next();
      TESSEL_CHAT_ASSIGN(e, Expression());
      other = e;
    }
    NodePtr n = MakeNode(Kind::kCond, at);
    n->kids = {a, cond, other};
    return n;
  }

 private:
  NodePtr Binary(Kind kind, const std::string& op, size_t at, NodePtr a, NodePtr b) {
    NodePtr n = MakeNode(kind, at);
    n->text = op;
    n->kids = {std::move(a), std::move(b)};
    return n;
  }
  absl::StatusOr<NodePtr> Or() {
    TESSEL_CHAT_ASSIGN(a, And());
    while (IsName("or")) {
      const size_t at = Next().offset;
      TESSEL_CHAT_ASSIGN(b, And());
      a = Binary(Kind::kOr, "or", at, a, b);
    }
    return a;
  }
  absl::StatusOr<NodePtr> And() {
    TESSEL_CHAT_ASSIGN(a, Not());
    while (IsName("and")) {
      const size_t at = Next().offset;
      TESSEL_CHAT_ASSIGN(b, Not());
      a = Binary(Kind::kAnd, "and", at, a, b);
    }
    return a;
  }
  absl::StatusOr<NodePtr> Not() {
    if (IsName("not")) {
      const size_t at = Next().offset;
      TESSEL_CHAT_ASSIGN(a, Not());
      NodePtr n = MakeNode(Kind::kNot, at);
      n->kids = {a};
      return n;
    }
    return Compare();
  }
  absl::StatusOr<NodePtr> Compare() {
    TESSEL_CHAT_ASSIGN(a, Concat());
    while (true) {
      const size_t at = Peek().offset;
      std::string op;
      for (const char* o : {"==", "!=", "<=", ">=", "<", ">"}) {
        if (IsOp(o)) op = o;
      }
      if (!op.empty()) {
        Next();
      } else if (IsName("in")) {
        Next();
        op = "in";
      } else if (IsName("not") && IsName("in", 1)) {
        p_ += 2;
        op = "not in";
      } else if (IsName("is")) {
        Next();
        NodePtr n = MakeNode(Kind::kTest, at);
        if (IsName("not")) {
          Next();
          n->negate = true;
        }
        TESSEL_CHAT_ASSIGN(name, ExpectName());
        n->text = name;
        n->kids = {a};
        a = n;
        continue;
      } else {
        return a;
      }
      TESSEL_CHAT_ASSIGN(b, Concat());
      a = Binary(Kind::kBinary, op, at, a, b);
    }
  }
  absl::StatusOr<NodePtr> Concat() {
    TESSEL_CHAT_ASSIGN(a, Add());
    while (IsOp("~")) {
      const size_t at = Next().offset;
      TESSEL_CHAT_ASSIGN(b, Add());
      a = Binary(Kind::kBinary, "~", at, a, b);
    }
    return a;
  }
  absl::StatusOr<NodePtr> Add() {
    TESSEL_CHAT_ASSIGN(a, Mul());
    while (IsOp("+") || IsOp("-")) {
      const Token& op = Next();
      TESSEL_CHAT_ASSIGN(b, Mul());
      a = Binary(Kind::kBinary, op.text, op.offset, a, b);
    }
    return a;
  }
  absl::StatusOr<NodePtr> Mul() {
    TESSEL_CHAT_ASSIGN(a, Unary());
    while (IsOp("*") || IsOp("/") || IsOp("//") || IsOp("%")) {
      const Token& op = Next();
      TESSEL_CHAT_ASSIGN(b, Unary());
      a = Binary(Kind::kBinary, op.text, op.offset, a, b);
    }
    return a;
  }
  absl::StatusOr<NodePtr> Unary() {
    if (IsOp("-")) {
      const size_t at = Next().offset;
      TESSEL_CHAT_ASSIGN(a, Unary());
      NodePtr n = MakeNode(Kind::kNeg, at);
      n->kids = {a};
      return n;
    }
    return Filtered();
  }
  absl::StatusOr<NodePtr> Filtered() {
    TESSEL_CHAT_ASSIGN(a, Postfix());
    while (IsOp("|")) {
      const size_t at = Next().offset;
      TESSEL_CHAT_ASSIGN(name, ExpectName());
      NodePtr n = MakeNode(Kind::kFilter, at);
      n->text = name;
      n->kids = {a};
      if (IsOp("(")) TESSEL_CHAT_RETURN_IF_ERROR(Arguments(*n));
      a = n;
    }
    return a;
  }
  // Call arguments after '(' into n.kids (after what is there), keyword names into n.names.
  absl::Status Arguments(Node& n) {
    TESSEL_CHAT_RETURN_IF_ERROR(Expect("("));
    while (!IsOp(")")) {
      std::string keyword;
      if (Peek().type == Token::kName && IsOp("=", 1)) {
        keyword = Next().text;
        Next();
      }
      absl::StatusOr<NodePtr> arg = Expression();
      if (!arg.ok()) return arg.status();
      n.kids.push_back(*arg);
      n.names.push_back(keyword);
      if (!IsOp(",")) break;
      Next();
    }
    return Expect(")");
  }
  absl::StatusOr<NodePtr> Postfix() {
    TESSEL_CHAT_ASSIGN(a, Primary());
    while (true) {
      if (IsOp(".")) {
        const size_t at = Next().offset;
        TESSEL_CHAT_ASSIGN(name, ExpectName());
        NodePtr n = MakeNode(Kind::kAttr, at);
        n->text = name;
        n->kids = {a};
        a = n;
      } else if (IsOp("[")) {
        const size_t at = Next().offset;
        NodePtr parts[3];
        int colons = 0;
        while (!IsOp("]")) {
          if (IsOp(":")) {
            if (++colons > 2) return Error("too many ':' in a slice");
            Next();
            continue;
          }
          if (parts[colons]) return Error("expected ']'");
          TESSEL_CHAT_ASSIGN(e, Expression());
          parts[colons] = e;
        }
        Next();
        NodePtr n;
        if (colons == 0) {
          if (!parts[0]) return Error("empty subscript");
          n = MakeNode(Kind::kItem, at);
          n->kids = {a, parts[0]};
        } else {
          n = MakeNode(Kind::kSlice, at);
          n->kids = {a, parts[0], parts[1], parts[2]};
        }
        a = n;
      } else if (IsOp("(")) {
        NodePtr n = MakeNode(Kind::kCall, Peek().offset);
        n->kids = {a};
        TESSEL_CHAT_RETURN_IF_ERROR(Arguments(*n));
        a = n;
      } else {
        return a;
      }
    }
  }
  absl::StatusOr<NodePtr> Primary() {
    const Token& t = Peek();
    NodePtr n = MakeNode(Kind::kLiteral, t.offset);
    switch (t.type) {
      case Token::kString:
        n->value = "";
        while (Peek().type == Token::kString) n->value = n->value.get<std::string>() + Next().text;
        return n;
      case Token::kInt:
        n->value = Next().i;
        return n;
      case Token::kFloat:
        n->value = Next().f;
        return n;
      case Token::kName: {
        const std::string name = Next().text;
        if (name == "true" || name == "True") {
          n->value = true;
        } else if (name == "false" || name == "False") {
          n->value = false;
        } else if (name == "none" || name == "None") {
          n->value = nullptr;
        } else {
          n->kind = Kind::kName;
          n->text = name;
        }
        return n;
      }
      case Token::kOp:
        if (t.text == "(") {
          Next();
          TESSEL_CHAT_ASSIGN(e, Expression());
          TESSEL_CHAT_RETURN_IF_ERROR(Expect(")"));
          return e;
        }
        if (t.text == "[") {
          Next();
          n->kind = Kind::kList;
          while (!IsOp("]")) {
            TESSEL_CHAT_ASSIGN(e, Expression());
            n->kids.push_back(e);
            if (!IsOp(",")) break;
            Next();
          }
          TESSEL_CHAT_RETURN_IF_ERROR(Expect("]"));
          return n;
        }
        if (t.text == "{") {
          return absl::UnimplementedError(absl::StrCat("chat template: dict literals (byte ", t.offset,
                                                       ") are outside the supported Jinja subset"));
        }
        break;
      default:
        break;
    }
    return Error("expected a value");
  }

  std::vector<Token> t_;
  size_t p_ = 0;
};

// ---- Statement parser ----------------------------------------------------------------------------

class TemplateParser {
 public:
  explicit TemplateParser(std::vector<Piece> pieces) : pieces_(std::move(pieces)) {}

  // Parses pieces into `block` until a statement whose keyword is in `ends` (returned, with its parser
  // positioned after the keyword), or the end of the source (returns "").
  absl::StatusOr<std::string> Block(Node& block, std::initializer_list<const char*> ends,
                                    std::unique_ptr<ExprParser>* end_tag) {
    while (i_ < pieces_.size()) {
      const Piece& p = pieces_[i_++];
      if (p.type == Piece::kText) {
        NodePtr n = MakeNode(Kind::kText, p.offset);
        n->text = p.text;
        block.kids.push_back(n);
        continue;
      }
      TESSEL_CHAT_ASSIGN(tokens, Lex(p.text, p.offset + 2));
      auto ep = std::make_unique<ExprParser>(std::move(tokens));
      if (p.type == Piece::kExpr) {
        TESSEL_CHAT_ASSIGN(e, ep->Expression());
        if (!ep->AtEnd()) return ep->Error("expected '}}'");
        NodePtr n = MakeNode(Kind::kOutput, p.offset);
        n->kids = {e};
        block.kids.push_back(n);
        continue;
      }
      if (ep->Peek().type != Token::kName) return ep->Error("expected a statement");
      const std::string keyword = ep->Next().text;
      for (const char* end : ends) {
        if (keyword == end) {
          *end_tag = std::move(ep);
          return keyword;
        }
      }
      if (keyword == "if") {
        TESSEL_CHAT_RETURN_IF_ERROR(If(block, *ep, p.offset));
      } else if (keyword == "for") {
        TESSEL_CHAT_RETURN_IF_ERROR(For(block, *ep, p.offset));
      } else if (keyword == "set") {
        TESSEL_CHAT_RETURN_IF_ERROR(Set(block, *ep, p.offset));
      } else if (keyword == "elif" || keyword == "else" || keyword == "endif" || keyword == "endfor") {
        return absl::InvalidArgumentError(absl::StrCat("chat template: '", keyword, "' at byte ", p.offset,
                                                       " without its opening statement"));
      } else {
        return absl::UnimplementedError(absl::StrCat("chat template: the '", keyword, "' statement at byte ", p.offset,
                                                     " is outside the supported Jinja subset (if, for, set); pass a "
                                                     "simpler template with --chat-template"));
      }
    }
    if (ends.size() > 0) {
      return absl::InvalidArgumentError(absl::StrCat("chat template: missing '", *(ends.end() - 1), "' before the end"));
    }
    return std::string();
  }

 private:
  absl::Status If(Node& block, ExprParser& ep, size_t at) {
    NodePtr n = MakeNode(Kind::kIf, at);
    std::unique_ptr<ExprParser> tag;
    absl::StatusOr<NodePtr> cond = ep.Expression();
    if (!cond.ok()) return cond.status();
    if (!ep.AtEnd()) return ep.Error("expected '%}'");
    while (true) {
      NodePtr body = MakeNode(Kind::kBlock, at);
      absl::StatusOr<std::string> end = Block(*body, {"elif", "else", "endif"}, &tag);
      if (!end.ok()) return end.status();
      n->kids.push_back(*cond);
      n->kids.push_back(body);
      if (*end == "endif") break;
      if (*end == "else") {
        cond = NodePtr(nullptr);
      } else {
        cond = tag->Expression();
        if (!cond.ok()) return cond.status();
      }
      if (!tag->AtEnd()) return tag->Error("expected '%}'");
      if (*end == "else") {
        NodePtr rest = MakeNode(Kind::kBlock, at);
        absl::StatusOr<std::string> e2 = Block(*rest, {"endif"}, &tag);
        if (!e2.ok()) return e2.status();
        n->kids.push_back(nullptr);
        n->kids.push_back(rest);
        break;
      }
    }
    block.kids.push_back(n);
    return absl::OkStatus();
  }
  absl::Status For(Node& block, ExprParser& ep, size_t at) {
    NodePtr n = MakeNode(Kind::kFor, at);
    while (true) {
      absl::StatusOr<std::string> name = ep.ExpectName();
      if (!name.ok()) return name.status();
      n->names.push_back(*name);
      if (!ep.IsOp(",")) break;
      ep.Next();
    }
    if (!ep.IsName("in")) return ep.Error("expected 'in'");
    ep.Next();
    // The iterable stops before a loop filter (`for x in xs if c`), which the subset does not take.
    absl::StatusOr<NodePtr> iterable = ep.Expression();
    if (!iterable.ok()) return iterable.status();
    if (!ep.AtEnd()) return ep.Error("expected '%}' (loop filters and recursive loops are not supported)");
    NodePtr body = MakeNode(Kind::kBlock, at);
    NodePtr otherwise = MakeNode(Kind::kBlock, at);
    std::unique_ptr<ExprParser> tag;
    absl::StatusOr<std::string> end = Block(*body, {"else", "endfor"}, &tag);
    if (!end.ok()) return end.status();
    if (*end == "else") {
      end = Block(*otherwise, {"endfor"}, &tag);
      if (!end.ok()) return end.status();
    }
    n->kids = {*iterable, body, otherwise};
    block.kids.push_back(n);
    return absl::OkStatus();
  }
  absl::Status Set(Node& block, ExprParser& ep, size_t at) {
    NodePtr n = MakeNode(Kind::kSet, at);
    absl::StatusOr<std::string> name = ep.ExpectName();
    if (!name.ok()) return name.status();
    n->names.push_back(*name);
    if (ep.IsOp(".")) {  // namespace attribute: set ns.found = true
      ep.Next();
      absl::StatusOr<std::string> attr = ep.ExpectName();
      if (!attr.ok()) return attr.status();
      n->names.push_back(*attr);
    }
    if (!ep.IsOp("=")) {
      return absl::UnimplementedError(absl::StrCat("chat template: block 'set' (byte ", at,
                                                   ") is outside the supported Jinja subset"));
    }
    ep.Next();
    absl::StatusOr<NodePtr> value = ep.Expression();
    if (!value.ok()) return value.status();
    if (!ep.AtEnd()) return ep.Error("expected '%}'");
    n->kids = {*value};
    block.kids.push_back(n);
    return absl::OkStatus();
  }

  std::vector<Piece> pieces_;
  size_t i_ = 0;
};

// ---- Evaluation -------------------------------------------------------------------------------------

Json Undefined() { return Json(Json::value_t::discarded); }
bool IsUndefined(const Json& v) { return v.is_discarded(); }

bool Truthy(const Json& v) {
  if (v.is_discarded() || v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<int64_t>() != 0;
  if (v.is_number()) return v.get<double>() != 0;
  if (v.is_string()) return !v.get_ref<const std::string&>().empty();
  return !v.empty();
}

std::string Str(const Json& v) {
  if (v.is_discarded()) return "";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "None";
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  return v.dump();
}

bool Equal(const Json& a, const Json& b) {
  if (a.is_discarded() || b.is_discarded()) return a.is_discarded() && b.is_discarded();
  if (a.is_number() && b.is_number() && !a.is_boolean() && !b.is_boolean()) return a.get<double>() == b.get<double>();
  return a == b;
}

std::string Strip(const std::string& s, bool left, bool right) {
  size_t b = 0, e = s.size();
  if (left) while (b < e && IsSpace(s[b])) ++b;
  if (right) while (e > b && IsSpace(s[e - 1])) --e;
  return s.substr(b, e - b);
}

class Renderer {
 public:
  explicit Renderer(std::vector<std::map<std::string, Json>> globals) : scopes_(std::move(globals)) {}

  absl::Status Exec(const Node& n, std::string& out) {
    switch (n.kind) {
      case Kind::kBlock:
        for (const NodePtr& k : n.kids) TESSEL_CHAT_RETURN_IF_ERROR(Exec(*k, out));
        return absl::OkStatus();
      case Kind::kText:
        out += n.text;
        return absl::OkStatus();
      case Kind::kOutput: {
        TESSEL_CHAT_ASSIGN(v, Eval(*n.kids[0]));
        out += Str(v);
        return absl::OkStatus();
      }
      case Kind::kIf:
        for (size_t i = 0; i < n.kids.size(); i += 2) {
          bool take = true;
          if (n.kids[i]) {
            TESSEL_CHAT_ASSIGN(c, Eval(*n.kids[i]));
            take = Truthy(c);
          }
          if (take) return Exec(*n.kids[i + 1], out);
        }
        return absl::OkStatus();
      case Kind::kFor:
        return For(n, out);
      case Kind::kSet: {
        TESSEL_CHAT_ASSIGN(v, Eval(*n.kids[0]));
        if (n.names.size() == 1) {
          scopes_.back()[n.names[0]] = v;
          return absl::OkStatus();
        }
        Json* ns = Lookup(n.names[0]);
        if (!ns || !ns->is_object()) return Error(n, absl::StrCat("'", n.names[0], "' is not a namespace"));
        (*ns)[n.names[1]] = v;
        return absl::OkStatus();
      }
      default:
        return Error(n, "internal: not a statement");
    }
  }

 private:
  absl::Status Error(const Node& n, const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat("chat template: ", what, " (byte ", n.offset, ")"));
  }

  Json* Lookup(const std::string& name) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end()) return &f->second;
    }
    return nullptr;
  }

  absl::Status For(const Node& n, std::string& out) {
    TESSEL_CHAT_ASSIGN(seq, Eval(*n.kids[0]));
    std::vector<Json> items;
    if (seq.is_array()) {
      items.assign(seq.begin(), seq.end());
    } else if (seq.is_object()) {
      for (auto it = seq.begin(); it != seq.end(); ++it) items.push_back(it.key());
    } else if (seq.is_string()) {
      for (char c : seq.get<std::string>()) items.push_back(std::string(1, c));
    } else if (!IsUndefined(seq) && !seq.is_null()) {
      return Error(n, "a for loop over a value that is not a list");
    }
    if (items.empty()) return Exec(*n.kids[2], out);
    const int64_t len = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < len; ++i) {
      std::map<std::string, Json> scope;
      if (n.names.size() == 1) {
        scope[n.names[0]] = items[i];
      } else {
        if (!items[i].is_array() || items[i].size() != n.names.size()) {
          return Error(n, absl::StrCat("cannot unpack a loop item into ", n.names.size(), " names"));
        }
        for (size_t k = 0; k < n.names.size(); ++k) scope[n.names[k]] = items[i][k];
      }
      scope["loop"] = Json{{"index", i + 1},       {"index0", i},           {"first", i == 0},
                           {"last", i == len - 1}, {"length", len},         {"revindex", len - i},
                           {"revindex0", len - i - 1}};
      scopes_.push_back(std::move(scope));
      absl::Status s = Exec(*n.kids[1], out);
      scopes_.pop_back();
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Json> Eval(const Node& n) {
    switch (n.kind) {
      case Kind::kLiteral:
        return n.value;
      case Kind::kName: {
        const Json* v = Lookup(n.text);
        return v ? *v : Undefined();
      }
      case Kind::kList: {
        Json list = Json::array();
        for (const NodePtr& k : n.kids) {
          TESSEL_CHAT_ASSIGN(v, Eval(*k));
          list.push_back(v);
        }
        return list;
      }
      case Kind::kAttr: {
        TESSEL_CHAT_ASSIGN(obj, Eval(*n.kids[0]));
        if (obj.is_object() && obj.contains(n.text)) return obj[n.text];
        return Undefined();
      }
      case Kind::kItem: {
        TESSEL_CHAT_ASSIGN(obj, Eval(*n.kids[0]));
        TESSEL_CHAT_ASSIGN(key, Eval(*n.kids[1]));
        return Item(n, obj, key);
      }
      case Kind::kSlice:
        return Slice(n);
      case Kind::kCall:
        return Call(n);
      case Kind::kFilter:
        return Filter(n);
      case Kind::kTest:
        return Test(n);
      case Kind::kNot: {
        TESSEL_CHAT_ASSIGN(v, Eval(*n.kids[0]));
        return Json(!Truthy(v));
      }
      case Kind::kNeg: {
        TESSEL_CHAT_ASSIGN(v, Eval(*n.kids[0]));
        if (v.is_number_integer()) return Json(-v.get<int64_t>());
        if (v.is_number()) return Json(-v.get<double>());
        return Error(n, "unary '-' of a value that is not a number");
      }
      case Kind::kAnd: {
        TESSEL_CHAT_ASSIGN(a, Eval(*n.kids[0]));
        if (!Truthy(a)) return a;
        return Eval(*n.kids[1]);
      }
      case Kind::kOr: {
        TESSEL_CHAT_ASSIGN(a, Eval(*n.kids[0]));
        if (Truthy(a)) return a;
        return Eval(*n.kids[1]);
      }
      case Kind::kCond: {
        TESSEL_CHAT_ASSIGN(c, Eval(*n.kids[1]));
        return Eval(*n.kids[Truthy(c) ? 0 : 2]);
      }
      case Kind::kBinary: {
        TESSEL_CHAT_ASSIGN(a, Eval(*n.kids[0]));
        TESSEL_CHAT_ASSIGN(b, Eval(*n.kids[1]));
        return Binary(n, a, b);
      }
      default:
        return Error(n, "internal: not an expression");
    }
  }

  absl::StatusOr<Json> Item(const Node& n, const Json& obj, const Json& key) {
    if (obj.is_object()) {
      if (!key.is_string()) return Error(n, "a mapping subscript that is not a string");
      return obj.contains(key.get<std::string>()) ? obj[key.get<std::string>()] : Undefined();
    }
    if (obj.is_array() || obj.is_string()) {
      if (!key.is_number_integer()) return Error(n, "a list subscript that is not an integer");
      const int64_t size = obj.is_array() ? static_cast<int64_t>(obj.size()) : static_cast<int64_t>(obj.get<std::string>().size());
      int64_t i = key.get<int64_t>();
      if (i < 0) i += size;
      if (i < 0 || i >= size) return Undefined();
      if (obj.is_array()) return obj[static_cast<size_t>(i)];
      return Json(std::string(1, obj.get<std::string>()[i]));
    }
    return Undefined();
  }

  absl::StatusOr<Json> Slice(const Node& n) {
    TESSEL_CHAT_ASSIGN(obj, Eval(*n.kids[0]));
    int64_t bounds[3] = {0, 0, 1};
    bool given[3] = {false, false, false};
    for (int k = 0; k < 3; ++k) {
      if (!n.kids[k + 1]) continue;
      TESSEL_CHAT_ASSIGN(v, Eval(*n.kids[k + 1]));
      if (!v.is_number_integer()) return Error(n, "a slice bound that is not an integer");
      bounds[k] = v.get<int64_t>();
      given[k] = true;
    }
    if (!obj.is_array() && !obj.is_string()) return Error(n, "a slice of a value that is not a list or string");
    const int64_t size = obj.is_array() ? static_cast<int64_t>(obj.size()) : static_cast<int64_t>(obj.get<std::string>().size());
    const int64_t step = bounds[2];
    if (step == 0) return Error(n, "a slice step of 0");
    auto clamp = [&](int64_t v, bool is_given, int64_t dflt) {
      if (!is_given) return dflt;
      if (v < 0) v += size;
      return step > 0 ? std::clamp<int64_t>(v, 0, size) : std::clamp<int64_t>(v, -1, size - 1);
    };
    const int64_t b = clamp(bounds[0], given[0], step > 0 ? 0 : size - 1);
    const int64_t e = clamp(bounds[1], given[1], step > 0 ? size : -1);
    Json out = obj.is_array() ? Json::array() : Json("");
    std::string s;
    for (int64_t i = b; step > 0 ? i < e : i > e; i += step) {
      if (obj.is_array()) out.push_back(obj[static_cast<size_t>(i)]);
      else s += obj.get<std::string>()[i];
    }
    if (obj.is_string()) out = s;
    return out;
  }

  absl::StatusOr<Json> Binary(const Node& n, const Json& a, const Json& b) {
    const std::string& op = n.text;
    if (op == "==") return Json(Equal(a, b));
    if (op == "!=") return Json(!Equal(a, b));
    if (op == "~") return Json(Str(a) + Str(b));
    if (op == "in" || op == "not in") {
      bool found = false;
      if (b.is_string() && a.is_string()) {
        found = b.get<std::string>().find(a.get<std::string>()) != std::string::npos;
      } else if (b.is_array()) {
        for (const Json& x : b) found |= Equal(x, a);
      } else if (b.is_object()) {
        found = a.is_string() && b.contains(a.get<std::string>());
      } else {
        return Error(n, "'in' over a value that is not a string, list or mapping");
      }
      return Json(op == "in" ? found : !found);
    }
    const bool numbers = a.is_number() && b.is_number();
    if (op == "+") {
      if (a.is_string() && b.is_string()) return Json(a.get<std::string>() + b.get<std::string>());
      if (a.is_array() && b.is_array()) {
        Json out = a;
        for (const Json& x : b) out.push_back(x);
        return out;
      }
    }
    if (op == "<" || op == ">" || op == "<=" || op == ">=") {
      int cmp;
      if (numbers) {
        cmp = a.get<double>() < b.get<double>() ? -1 : a.get<double>() > b.get<double>() ? 1 : 0;
      } else if (a.is_string() && b.is_string()) {
        cmp = a.get<std::string>().compare(b.get<std::string>());
      } else {
        return Error(n, absl::StrCat("'", op, "' between values that are not both numbers or both strings"));
      }
      if (op == "<") return Json(cmp < 0);
      if (op == ">") return Json(cmp > 0);
      if (op == "<=") return Json(cmp <= 0);
      return Json(cmp >= 0);
    }
    if (!numbers) {
      return Error(n, absl::StrCat("'", op, "' between ", a.type_name(), " and ", b.type_name(),
                                   IsUndefined(a) || IsUndefined(b) ? " (an undefined name?)" : ""));
    }
    const bool ints = a.is_number_integer() && b.is_number_integer();
    if (ints && op != "/") {
      const int64_t x = a.get<int64_t>(), y = b.get<int64_t>();
      if (op == "+") return Json(x + y);
      if (op == "-") return Json(x - y);
      if (op == "*") return Json(x * y);
      if (y == 0) return Error(n, "division by zero");
      // Python's floor division and modulo (the sign of the divisor).
      int64_t q = x / y, r = x % y;
      if (r != 0 && ((r < 0) != (y < 0))) {
        --q;
        r += y;
      }
      if (op == "//") return Json(q);
      if (op == "%") return Json(r);
    }
    const double x = a.get<double>(), y = b.get<double>();
    if (op == "+") return Json(x + y);
    if (op == "-") return Json(x - y);
    if (op == "*") return Json(x * y);
    if (y == 0) return Error(n, "division by zero");
    if (op == "/") return Json(x / y);
    if (op == "//") return Json(std::floor(x / y));
    if (op == "%") return Json(x - std::floor(x / y) * y);
    return Error(n, absl::StrCat("operator '", op, "' is not supported"));
  }

  absl::StatusOr<std::vector<Json>> Args(const Node& n, size_t first) {
    std::vector<Json> args;
    for (size_t i = first; i < n.kids.size(); ++i) {
      TESSEL_CHAT_ASSIGN(v, Eval(*n.kids[i]));
      args.push_back(v);
    }
    return args;
  }

  absl::StatusOr<Json> Call(const Node& n) {
    const Node& callee = *n.kids[0];
    if (callee.kind == Kind::kName) {
      TESSEL_CHAT_ASSIGN(args, Args(n, 1));
      if (callee.text == "raise_exception") {
        return absl::InvalidArgumentError(
            absl::StrCat("the chat template refused the messages: ", args.empty() ? "" : Str(args[0])));
      }
      if (callee.text == "namespace") {
        Json ns = Json::object();
        for (size_t i = 0; i < args.size(); ++i) {
          if (n.names[i].empty()) return Error(n, "namespace() takes keyword arguments only");
          ns[n.names[i]] = args[i];
        }
        return ns;
      }
      if (callee.text == "range") {
        int64_t b = 0, e = 0;
        if (args.size() == 1 && args[0].is_number_integer()) {
          e = args[0].get<int64_t>();
        } else if (args.size() == 2 && args[0].is_number_integer() && args[1].is_number_integer()) {
          b = args[0].get<int64_t>();
          e = args[1].get<int64_t>();
        } else {
          return Error(n, "range() takes one or two integers");
        }
        if (e - b > 1000000) return Error(n, "range() of more than a million items");
        Json out = Json::array();
        for (int64_t i = b; i < e; ++i) out.push_back(i);
        return out;
      }
      return Error(n, absl::StrCat("unknown function '", callee.text, "'"));
    }
    if (callee.kind != Kind::kAttr) return Error(n, "a call of a value that is not a function");
    TESSEL_CHAT_ASSIGN(obj, Eval(*callee.kids[0]));
    TESSEL_CHAT_ASSIGN(args, Args(n, 1));
    const std::string& m = callee.text;
    if (obj.is_string()) {
      const std::string s = obj.get<std::string>();
      if (m == "strip" && args.empty()) return Json(Strip(s, true, true));
      if (m == "lstrip" && args.empty()) return Json(Strip(s, true, false));
      if (m == "rstrip" && args.empty()) return Json(Strip(s, false, true));
      if (m == "upper") return Json(absl::AsciiStrToUpper(s));
      if (m == "lower") return Json(absl::AsciiStrToLower(s));
      if ((m == "startswith" || m == "endswith") && args.size() == 1 && args[0].is_string()) {
        const std::string& x = args[0].get_ref<const std::string&>();
        return Json(m == "startswith" ? absl::StartsWith(s, x) : absl::EndsWith(s, x));
      }
      if (m == "split" && args.size() == 1 && args[0].is_string() && !args[0].get<std::string>().empty()) {
        Json out = Json::array();
        for (absl::string_view part : absl::StrSplit(s, args[0].get<std::string>())) out.push_back(std::string(part));
        return out;
      }
    }
    if (obj.is_object()) {
      if (m == "items") {
        Json out = Json::array();
        for (auto it = obj.begin(); it != obj.end(); ++it) out.push_back(Json::array({it.key(), it.value()}));
        return out;
      }
      if (m == "keys" || m == "values") {
        Json out = Json::array();
        for (auto it = obj.begin(); it != obj.end(); ++it) out.push_back(m == "keys" ? Json(it.key()) : it.value());
        return out;
      }
      if (m == "get" && !args.empty() && args[0].is_string()) {
        const std::string& k = args[0].get_ref<const std::string&>();
        if (obj.contains(k)) return obj[k];
        return args.size() > 1 ? args[1] : Json(nullptr);
      }
    }
    return Error(n, absl::StrCat("method '", m, "' of a ", IsUndefined(obj) ? "undefined value" : obj.type_name(),
                                 " is not supported"));
  }

  absl::StatusOr<Json> Filter(const Node& n) {
    TESSEL_CHAT_ASSIGN(v, Eval(*n.kids[0]));
    TESSEL_CHAT_ASSIGN(args, Args(n, 1));
    const std::string& f = n.text;
    if (f == "trim") return Json(Strip(Str(v), true, true));
    if (f == "upper") return Json(absl::AsciiStrToUpper(Str(v)));
    if (f == "lower") return Json(absl::AsciiStrToLower(Str(v)));
    if (f == "string") return Json(Str(v));
    if (f == "length" || f == "count") {
      if (v.is_string()) return Json(static_cast<int64_t>(v.get<std::string>().size()));
      if (v.is_array() || v.is_object()) return Json(static_cast<int64_t>(v.size()));
      return Error(n, "length of a value that is not a string, list or mapping");
    }
    if (f == "tojson") return Json(IsUndefined(v) ? std::string("null") : v.dump(-1, ' ', false, Json::error_handler_t::replace));
    if (f == "default" || f == "d") return IsUndefined(v) ? (args.empty() ? Json("") : args[0]) : v;
    if (f == "first" || f == "last") {
      if (v.is_array()) return v.empty() ? Undefined() : (f == "first" ? v.front() : v.back());
      return Error(n, absl::StrCat("'", f, "' of a value that is not a list"));
    }
    if (f == "join") {
      if (!v.is_array()) return Error(n, "'join' of a value that is not a list");
      std::vector<std::string> parts;
      for (const Json& x : v) parts.push_back(Str(x));
      return Json(absl::StrJoin(parts, args.empty() ? "" : Str(args[0])));
    }
    return absl::UnimplementedError(absl::StrCat("chat template: the filter '", f, "' (byte ", n.offset,
                                                 ") is outside the supported Jinja subset"));
  }

  absl::StatusOr<Json> Test(const Node& n) {
    TESSEL_CHAT_ASSIGN(v, Eval(*n.kids[0]));
    const std::string& t = n.text;
    bool r;
    if (t == "defined") r = !IsUndefined(v);
    else if (t == "undefined") r = IsUndefined(v);
    else if (t == "none") r = v.is_null();
    else if (t == "string") r = v.is_string();
    else if (t == "number") r = v.is_number();
    else if (t == "integer") r = v.is_number_integer();
    else if (t == "boolean") r = v.is_boolean();
    else if (t == "true") r = v.is_boolean() && v.get<bool>();
    else if (t == "false") r = v.is_boolean() && !v.get<bool>();
    else if (t == "mapping") r = v.is_object();
    else if (t == "sequence" || t == "iterable") r = v.is_array() || v.is_string() || v.is_object();
    else if (t == "odd" || t == "even") {
      if (!v.is_number_integer()) return Error(n, absl::StrCat("'", t, "' of a value that is not an integer"));
      r = (v.get<int64_t>() % 2 != 0) == (t == "odd");
    } else {
      return absl::UnimplementedError(absl::StrCat("chat template: the test '", t, "' (byte ", n.offset,
                                                   ") is outside the supported Jinja subset"));
    }
    return Json(n.negate ? !r : r);
  }

  std::vector<std::map<std::string, Json>> scopes_;
};

}  // namespace chat_internal

absl::StatusOr<ChatTemplate> ChatTemplate::Parse(absl::string_view source) {
  using namespace chat_internal;
  absl::StatusOr<std::vector<Piece>> pieces = Split(source);
  if (!pieces.ok()) return pieces.status();
  TemplateParser parser(*std::move(pieces));
  NodePtr root = MakeNode(Kind::kBlock, 0);
  std::unique_ptr<ExprParser> unused;
  absl::StatusOr<std::string> end = parser.Block(*root, {}, &unused);
  if (!end.ok()) return end.status();
  ChatTemplate t;
  t.root_ = root;
  return t;
}

absl::StatusOr<std::string> ChatTemplate::Render(const ChatTemplateInputs& inputs) const {
  using namespace chat_internal;
  Json messages = Json::array();
  for (const ChatMessage& m : inputs.messages) messages.push_back(Json{{"role", m.role}, {"content", m.content}});
  std::map<std::string, Json> globals = {
      {"messages", messages},
      {"bos_token", inputs.bos_token},
      {"eos_token", inputs.eos_token},
      {"add_generation_prompt", inputs.add_generation_prompt},
  };
  Renderer r({globals});
  std::string out;
  if (absl::Status s = r.Exec(*root_, out); !s.ok()) return s;
  return out;
}

}  // namespace tessel::llm
