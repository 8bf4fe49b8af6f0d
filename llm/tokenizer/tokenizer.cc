// Tokenizer construction from GGUF metadata or tokenizer.json, and the shared merge engine.
#include "llm/tokenizer/tokenizer.h"

#include <algorithm>
#include <cstring>
#include <queue>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "llm/tokenizer/internal/gpt2_pretokenizer.h"
#include "llm/tokenizer/internal/unicode.h"

namespace tessel::llm {
namespace {

constexpr absl::string_view kVisibleSpace = "\xe2\x96\x81";  // U+2581 "▁"

std::string MergeKey(absl::string_view left, absl::string_view right) {
  std::string key(4, '\0');
  const uint32_t n = static_cast<uint32_t>(left.size());
  std::memcpy(&key[0], &n, 4);
  key.append(left.data(), left.size());
  key.append(right.data(), right.size());
  return key;
}

// GPT-2's bytes_to_unicode(): printable bytes map to themselves, the rest to U+0100 onwards.
void BuildByteMap(std::array<std::string, 256>* to_unicode, absl::flat_hash_map<uint32_t, uint8_t>* to_byte) {
  int extra = 0;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    const uint32_t cp = printable ? b : 256 + extra++;
    (*to_unicode)[b].clear();
    unicode::AppendUtf8(cp, &(*to_unicode)[b]);
    (*to_byte)[cp] = static_cast<uint8_t>(b);
  }
}

bool ParseByteToken(absl::string_view text, int* byte) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return false;
  int v = 0;
  for (int i = 3; i < 5; ++i) {
    const char c = text[i];
    v <<= 4;
    if (c >= '0' && c <= '9') {
      v |= c - '0';
    } else if (c >= 'A' && c <= 'F') {
      v |= c - 'A' + 10;
    } else if (c >= 'a' && c <= 'f') {
      v |= c - 'a' + 10;
    } else {
      return false;
    }
  }
  *byte = v;
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::Create(Spec spec) {
  std::unique_ptr<Tokenizer> t(new Tokenizer(std::move(spec)));
  if (absl::Status s = t->Init(); !s.ok()) return s;
  return t;
}

absl::Status Tokenizer::Init() {
  const size_t n = spec_.tokens.size();
  if (n == 0) return absl::InvalidArgumentError("tokenizer: the vocabulary is empty");
  if (n > static_cast<size_t>(INT32_MAX)) return absl::InvalidArgumentError("tokenizer: vocabulary too large");
  if (spec_.types.empty()) spec_.types.assign(n, TokenType::kNormal);
  if (spec_.types.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("tokenizer: ", spec_.types.size(), " token types for ", n, " tokens"));
  }
  if (!spec_.scores.empty() && spec_.scores.size() != n) {
    return absl::InvalidArgumentError(absl::StrCat("tokenizer: ", spec_.scores.size(), " scores for ", n, " tokens"));
  }
  for (int32_t* id : {&spec_.bos, &spec_.eos, &spec_.unk}) {
    if (*id < -1 || *id >= static_cast<int32_t>(n)) {
      return absl::InvalidArgumentError(absl::StrCat("tokenizer: special token id ", *id, " is outside the ", n,
                                                     "-token vocabulary"));
    }
  }
  use_ranks_ = spec_.kind == Kind::kByteLevelBpe || !spec_.merges.empty();
  if (spec_.kind == Kind::kByteLevelBpe && spec_.merges.empty()) {
    return absl::InvalidArgumentError("tokenizer: a byte-level BPE vocabulary needs merges");
  }
  if (!use_ranks_ && spec_.scores.empty()) {
    return absl::InvalidArgumentError("tokenizer: a SentencePiece vocabulary needs scores or merges");
  }
  token_ids_.reserve(n);
  for (size_t i = 0; i < n; ++i) token_ids_.emplace(spec_.tokens[i], static_cast<int32_t>(i));
  for (size_t r = 0; r < spec_.merges.size(); ++r) {
    merge_ranks_.emplace(MergeKey(spec_.merges[r].first, spec_.merges[r].second), static_cast<int32_t>(r));
  }
  byte_tokens_.fill(-1);
  for (size_t i = 0; i < n; ++i) {
    int b;
    if (ParseByteToken(spec_.tokens[i], &b) &&
        (spec_.types[i] == TokenType::kByte || byte_tokens_[b] < 0)) {
      byte_tokens_[b] = static_cast<int32_t>(i);
    }
  }
  if (spec_.kind == Kind::kByteLevelBpe) BuildByteMap(&byte_to_unicode_, &unicode_to_byte_);
  return absl::OkStatus();
}

bool Tokenizer::Mergeable(int32_t id) const {
  const TokenType t = spec_.types[id];
  return t == TokenType::kNormal || t == TokenType::kUserDefined || t == TokenType::kUndefined;
}

std::vector<std::pair<uint32_t, uint32_t>> Tokenizer::MergeSymbols(absl::string_view text) const {
  struct Symbol {
    uint32_t begin, len;
    int32_t prev, next;
  };
  struct Bigram {
    double priority;
    int32_t left, right;
    uint32_t size;
    bool operator<(const Bigram& o) const {  // the queue's top: highest priority, then leftmost
      return priority < o.priority || (priority == o.priority && left > o.left);
    }
  };
  std::vector<Symbol> syms;
  for (size_t pos = 0; pos < text.size();) {
    uint32_t cp;
    const int len = unicode::DecodeUtf8(text, pos, &cp);
    const int32_t i = static_cast<int32_t>(syms.size());
    syms.push_back({static_cast<uint32_t>(pos), static_cast<uint32_t>(len), i - 1, i + 1});
    pos += len;
  }
  if (syms.empty()) return {};
  syms.back().next = -1;
  std::priority_queue<Bigram> queue;
  std::string scratch;
  auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const absl::string_view a = text.substr(syms[left].begin, syms[left].len);
    const absl::string_view b = text.substr(syms[right].begin, syms[right].len);
    double priority;
    if (use_ranks_) {
      auto it = merge_ranks_.find(MergeKey(a, b));
      if (it == merge_ranks_.end()) return;
      priority = -static_cast<double>(it->second);
    } else {
      scratch.assign(a.data(), a.size());
      scratch.append(b.data(), b.size());
      auto it = token_ids_.find(scratch);
      if (it == token_ids_.end() || !Mergeable(it->second)) return;
      priority = spec_.scores[it->second];
    }
    queue.push({priority, left, right, syms[left].len + syms[right].len});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(syms.size()); ++i) try_add(i - 1, i);
  while (!queue.empty()) {
    const Bigram bg = queue.top();
    queue.pop();
    Symbol& l = syms[bg.left];
    Symbol& r = syms[bg.right];
    // Stale entries: one side already merged away, or grown since the entry was queued.
    if (l.len == 0 || r.len == 0 || l.len + r.len != bg.size) continue;
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) syms[r.next].prev = bg.left;
    try_add(l.prev, bg.left);
    try_add(bg.left, l.next);
  }
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (int32_t i = 0; i != -1; i = syms[i].next) out.emplace_back(syms[i].begin, syms[i].len);
  return out;
}

void Tokenizer::EmitSentencePieceSymbol(absl::string_view piece, std::vector<int32_t>* out) const {
  auto it = token_ids_.find(piece);
  if (it != token_ids_.end() && Mergeable(it->second)) {
    out->push_back(it->second);
    return;
  }
  for (unsigned char c : piece) {
    const int32_t id = byte_tokens_[c];
    if (id >= 0) {
      out->push_back(id);
    } else if (spec_.unk >= 0) {
      out->push_back(spec_.unk);
    }
  }
}

void Tokenizer::EncodeSentencePiece(absl::string_view text, std::vector<int32_t>* out) const {
  std::string normalized;
  normalized.reserve(text.size() * 2 + 3);
  if (spec_.add_space_prefix) normalized.append(kVisibleSpace.data(), kVisibleSpace.size());
  for (char c : text) {
    if (c == ' ') {
      normalized.append(kVisibleSpace.data(), kVisibleSpace.size());
    } else {
      normalized.push_back(c);
    }
  }
  for (const auto& [begin, len] : MergeSymbols(normalized)) {
    EmitSentencePieceSymbol(absl::string_view(normalized).substr(begin, len), out);
  }
}

void Tokenizer::EncodeByteLevel(absl::string_view text, std::vector<int32_t>* out) const {
  std::string mapped;
  for (absl::string_view word : Gpt2PreTokenize(text)) {
    mapped.clear();
    for (unsigned char c : word) mapped += byte_to_unicode_[c];
    for (const auto& [begin, len] : MergeSymbols(mapped)) {
      const absl::string_view piece = absl::string_view(mapped).substr(begin, len);
      auto it = token_ids_.find(piece);
      if (it != token_ids_.end()) {
        out->push_back(it->second);
        continue;
      }
      // A vocabulary without some single-byte token: fall back per character, then to unknown.
      for (size_t pos = 0; pos < piece.size();) {
        uint32_t cp;
        const int clen = unicode::DecodeUtf8(piece, pos, &cp);
        auto ct = token_ids_.find(piece.substr(pos, clen));
        if (ct != token_ids_.end()) {
          out->push_back(ct->second);
        } else if (spec_.unk >= 0) {
          out->push_back(spec_.unk);
        }
        pos += clen;
      }
    }
  }
}

std::vector<int32_t> Tokenizer::Encode(absl::string_view text, bool add_special) const {
  std::vector<int32_t> out;
  if (add_special && spec_.add_bos && spec_.bos >= 0) out.push_back(spec_.bos);
  if (!text.empty()) {
    if (spec_.kind == Kind::kSentencePiece) {
      EncodeSentencePiece(text, &out);
    } else {
      EncodeByteLevel(text, &out);
    }
  }
  if (add_special && spec_.add_eos && spec_.eos >= 0) out.push_back(spec_.eos);
  return out;
}

std::string Tokenizer::TokenPiece(int32_t id) const {
  if (id < 0 || id >= vocab_size()) return "";
  const TokenType type = spec_.types[id];
  if (type == TokenType::kControl || type == TokenType::kUnused) return "";
  const std::string& text = spec_.tokens[id];
  if (spec_.kind == Kind::kSentencePiece) {
    int b;
    if (type == TokenType::kByte && ParseByteToken(text, &b)) return std::string(1, static_cast<char>(b));
    std::string out;
    for (size_t pos = 0; pos < text.size();) {
      if (text.compare(pos, kVisibleSpace.size(), kVisibleSpace.data(), kVisibleSpace.size()) == 0) {
        out.push_back(' ');
        pos += kVisibleSpace.size();
      } else {
        out.push_back(text[pos++]);
      }
    }
    return out;
  }
  std::string out;
  for (size_t pos = 0; pos < text.size();) {
    uint32_t cp;
    const int len = unicode::DecodeUtf8(text, pos, &cp);
    auto it = unicode_to_byte_.find(cp);
    if (it != unicode_to_byte_.end()) {
      out.push_back(static_cast<char>(it->second));
    } else {
      out.append(text, pos, len);
    }
    pos += len;
  }
  return out;
}

std::string Tokenizer::Decode(absl::Span<const int32_t> ids) const {
  std::string out;
  for (int32_t id : ids) out += TokenPiece(id);
  if (spec_.kind == Kind::kSentencePiece && spec_.add_space_prefix && !out.empty() && out[0] == ' ') out.erase(0, 1);
  return out;
}

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::FromGguf(const GgufFile& gguf) {
  const std::string prefix = absl::StrCat("gguf '", gguf.path(), "': ");
  absl::StatusOr<std::string> model = gguf.GetString("tokenizer.ggml.model");
  if (!model.ok()) return model.status();
  Spec spec;
  if (*model == "llama") {
    spec.kind = Kind::kSentencePiece;
  } else if (*model == "gpt2") {
    spec.kind = Kind::kByteLevelBpe;
    absl::StatusOr<std::string> pre = gguf.GetStringOr("tokenizer.ggml.pre", "default");
    if (!pre.ok()) return pre.status();
    if (*pre != "default" && *pre != "gpt2" && *pre != "gpt-2") {
      return absl::UnimplementedError(absl::StrCat(prefix, "pre-tokenizer '", *pre,
                                                   "' is not supported (Tessel implements GPT-2's)"));
    }
  } else {
    return absl::UnimplementedError(absl::StrCat(prefix, "tokenizer model '", *model,
                                                 "' is not supported (Tessel reads \"llama\" and \"gpt2\")"));
  }
  absl::StatusOr<absl::Span<const absl::string_view>> tokens = gguf.GetStringArray("tokenizer.ggml.tokens");
  if (!tokens.ok()) return tokens.status();
  spec.tokens.reserve(tokens->size());
  for (absl::string_view t : *tokens) spec.tokens.emplace_back(t);
  if (gguf.Has("tokenizer.ggml.scores")) {
    absl::StatusOr<std::vector<double>> scores = gguf.GetFloatArray("tokenizer.ggml.scores");
    if (!scores.ok()) return scores.status();
    spec.scores.assign(scores->begin(), scores->end());
  }
  if (gguf.Has("tokenizer.ggml.token_type")) {
    absl::StatusOr<std::vector<int64_t>> types = gguf.GetIntArray("tokenizer.ggml.token_type");
    if (!types.ok()) return types.status();
    for (int64_t t : *types) {
      if (t < 0 || t > 6) {
        return absl::InvalidArgumentError(absl::StrCat(prefix, "tokenizer.ggml.token_type has invalid value ", t));
      }
      spec.types.push_back(static_cast<TokenType>(t));
    }
  }
  if (spec.kind == Kind::kByteLevelBpe || gguf.Has("tokenizer.ggml.merges")) {
    absl::StatusOr<absl::Span<const absl::string_view>> merges = gguf.GetStringArray("tokenizer.ggml.merges");
    if (!merges.ok()) return merges.status();
    for (absl::string_view m : *merges) {
      const size_t sp = m.find(' ', 1);
      if (sp == absl::string_view::npos) {
        return absl::InvalidArgumentError(absl::StrCat(prefix, "merge '", m, "' is not \"left right\""));
      }
      spec.merges.emplace_back(std::string(m.substr(0, sp)), std::string(m.substr(sp + 1)));
    }
  }
  const bool spm = spec.kind == Kind::kSentencePiece;
  absl::StatusOr<int64_t> bos = gguf.GetIntOr("tokenizer.ggml.bos_token_id", spm ? 1 : -1);
  absl::StatusOr<int64_t> eos = gguf.GetIntOr("tokenizer.ggml.eos_token_id", spm ? 2 : -1);
  absl::StatusOr<int64_t> unk = gguf.GetIntOr("tokenizer.ggml.unknown_token_id", spm ? 0 : -1);
  absl::StatusOr<bool> add_bos = gguf.GetBoolOr("tokenizer.ggml.add_bos_token", spm);
  absl::StatusOr<bool> add_eos = gguf.GetBoolOr("tokenizer.ggml.add_eos_token", false);
  absl::StatusOr<bool> prefix_space = gguf.GetBoolOr("tokenizer.ggml.add_space_prefix", spm);
  for (const absl::Status& s : {bos.status(), eos.status(), unk.status(), add_bos.status(), add_eos.status(),
                                prefix_space.status()}) {
    if (!s.ok()) return s;
  }
  const int64_t n = static_cast<int64_t>(spec.tokens.size());
  auto in_range = [n](int64_t id) { return id >= -1 && id < n ? static_cast<int32_t>(id) : -2; };
  spec.bos = in_range(*bos);
  spec.eos = in_range(*eos);
  spec.unk = in_range(*unk);
  if (spec.bos == -2 || spec.eos == -2) {
    return absl::InvalidArgumentError(absl::StrCat(prefix, "BOS/EOS token id (", *bos, "/", *eos, ") is outside the ",
                                                   n, "-token vocabulary"));
  }
  if (spec.unk == -2) spec.unk = -1;
  spec.add_bos = *add_bos;
  spec.add_eos = *add_eos;
  spec.add_space_prefix = *prefix_space;
  absl::StatusOr<std::unique_ptr<Tokenizer>> t = Create(std::move(spec));
  if (!t.ok()) return absl::Status(t.status().code(), absl::StrCat(prefix, t.status().message()));
  return t;
}

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::FromHuggingFaceJson(const json::Value& root, int32_t bos,
                                                                         int32_t eos, absl::string_view what) {
  auto error = [&](absl::string_view msg) { return absl::InvalidArgumentError(absl::StrCat(what, ": ", msg)); };
  const json::Value* model = root.Find("model");
  if (model == nullptr || !model->is_object()) return error("missing the \"model\" object");
  const json::Value* type = model->Find("type");
  if (type == nullptr || !type->is_string() || type->str() != "BPE") {
    return absl::UnimplementedError(absl::StrCat(what, ": only BPE tokenizer models are supported (model.type is ",
                                                 type && type->is_string() ? type->str() : "missing", ")"));
  }
  const json::Value* vocab = model->Find("vocab");
  const json::Value* merges = model->Find("merges");
  if (vocab == nullptr || !vocab->is_object() || merges == nullptr || !merges->is_array()) {
    return error("model needs a \"vocab\" object and a \"merges\" array");
  }
  Spec spec;
  std::vector<std::pair<int64_t, std::string>> entries;
  std::vector<std::pair<int64_t, bool>> added;  // id, special
  int64_t max_id = -1;
  for (const auto& [text, id] : vocab->members()) {
    if (!id.is_integer() || id.integer() < 0 || id.integer() > (1 << 24)) return error("vocab ids must be small integers");
    entries.emplace_back(id.integer(), text);
    max_id = std::max(max_id, id.integer());
  }
  if (const json::Value* at = root.Find("added_tokens"); at != nullptr && at->is_array()) {
    for (const json::Value& a : at->items()) {
      const json::Value* id = a.Find("id");
      const json::Value* content = a.Find("content");
      if (id == nullptr || !id->is_integer() || id->integer() < 0 || id->integer() > (1 << 24) || content == nullptr ||
          !content->is_string()) {
        return error("added_tokens entries need an integer \"id\" and a string \"content\"");
      }
      const json::Value* special = a.Find("special");
      entries.emplace_back(id->integer(), content->str());
      added.emplace_back(id->integer(), special != nullptr && special->is_bool() && special->bool_value());
      max_id = std::max(max_id, id->integer());
    }
  }
  spec.tokens.assign(max_id + 1, "");
  spec.types.assign(max_id + 1, TokenType::kUnused);
  for (const auto& [id, text] : entries) {
    spec.tokens[id] = text;
    int b;
    spec.types[id] = ParseByteToken(text, &b) ? TokenType::kByte : TokenType::kNormal;
  }
  for (const auto& [id, special] : added) spec.types[id] = special ? TokenType::kControl : TokenType::kUserDefined;
  for (const json::Value& m : merges->items()) {
    if (m.is_string()) {
      const size_t sp = m.str().find(' ', 1);
      if (sp == std::string::npos) return error(absl::StrCat("merge '", m.str(), "' is not \"left right\""));
      spec.merges.emplace_back(m.str().substr(0, sp), m.str().substr(sp + 1));
    } else if (m.is_array() && m.items().size() == 2 && m.items()[0].is_string() && m.items()[1].is_string()) {
      spec.merges.emplace_back(m.items()[0].str(), m.items()[1].str());
    } else {
      return error("merges must be \"left right\" strings or [left, right] pairs");
    }
  }
  // Byte fallback with "▁" normalization is the SentencePiece family (Llama, Mistral); a ByteLevel
  // pre-tokenizer is GPT-2's scheme.
  const json::Value* fallback = model->Find("byte_fallback");
  const bool byte_fallback = fallback != nullptr && fallback->is_bool() && fallback->bool_value();
  const json::Value* pre = root.Find("pre_tokenizer");
  const json::Value* pre_type = pre != nullptr ? pre->Find("type") : nullptr;
  if (byte_fallback) {
    spec.kind = Kind::kSentencePiece;
    spec.add_bos = true;
    spec.add_space_prefix = false;
    if (const json::Value* norm = root.Find("normalizer"); norm != nullptr && norm->is_object()) {
      const json::Value* list = norm->Find("normalizers");
      std::vector<const json::Value*> steps;
      if (list != nullptr && list->is_array()) {
        for (const json::Value& s : list->items()) steps.push_back(&s);
      } else {
        steps.push_back(norm);
      }
      for (const json::Value* s : steps) {
        const json::Value* t = s->Find("type");
        const json::Value* p = s->Find("prepend");
        if (t && t->is_string() && t->str() == "Prepend" && p && p->is_string() && p->str() == kVisibleSpace) {
          spec.add_space_prefix = true;
        }
      }
    }
  } else if (pre_type != nullptr && pre_type->is_string() && pre_type->str() == "ByteLevel") {
    spec.kind = Kind::kByteLevelBpe;
    spec.add_bos = false;
    spec.add_space_prefix = false;
  } else {
    return absl::UnimplementedError(absl::StrCat(
        what, ": unsupported BPE variant (Tessel reads byte_fallback SentencePiece-style and ByteLevel GPT-2-style)"));
  }
  const json::Value* unk = model->Find("unk_token");
  if (unk != nullptr && unk->is_string()) {
    for (size_t i = 0; i < spec.tokens.size(); ++i) {
      if (spec.tokens[i] == unk->str()) spec.unk = static_cast<int32_t>(i);
    }
  }
  spec.bos = bos;
  spec.eos = eos;
  absl::StatusOr<std::unique_ptr<Tokenizer>> t = Create(std::move(spec));
  if (!t.ok()) return absl::Status(t.status().code(), absl::StrCat(what, ": ", t.status().message()));
  return t;
}

}  // namespace tessel::llm
