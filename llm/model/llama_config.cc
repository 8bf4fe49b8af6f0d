// Llama hyperparameters from GGUF metadata or config.json.
#include "llm/model/llama_config.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tessel::llm {
namespace {

// Context lengths and windows size a runtime's buffers by tokens: a value past kMaxContextLength is a
// load error naming the key, before anything is sized by it.
absl::Status CheckTokenCount(absl::string_view source, absl::string_view key, int64_t value) {
  if (value <= kMaxContextLength) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(source, ": ", key, " is ", value, ", more than the ",
                                                 kMaxContextLength, " tokens Tessel accepts (a corrupt file?)"));
}

}  // namespace

absl::Status LlamaConfig::Validate(absl::string_view source) const {
  auto bad = [&](const std::string& msg) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", msg));
  };
  if (dim <= 0 || num_layers <= 0 || num_heads <= 0 || num_kv_heads <= 0 || ffn_dim <= 0 || vocab_size <= 0) {
    return bad(absl::StrCat("every size must be positive (", ToString(), ")"));
  }
  if (dim % num_heads != 0 || head_dim != dim / num_heads) {
    return bad(absl::StrCat("embedding width ", dim, " is not ", num_heads, " heads of ", head_dim));
  }
  if (num_heads % num_kv_heads != 0) {
    return bad(absl::StrCat(num_heads, " query heads are not a multiple of ", num_kv_heads, " KV heads"));
  }
  if (head_dim % 2 != 0) return bad(absl::StrCat("head size ", head_dim, " is odd; RoPE rotates pairs"));
  if (!(norm_eps > 0) || !(rope_theta > 0)) return bad("norm epsilon and RoPE base must be positive");
  if (sliding_window < 0) return bad("negative sliding window");
  if (context_length <= 0) return bad("context length must be positive");
  return absl::OkStatus();
}

std::string LlamaConfig::ToString() const {
  return absl::StrFormat(
      "dim %d, %d layers, %d heads (%d KV), head %d, ffn %d, vocab %d, context %d, rope base %g (%s), eps %g%s%s",
      dim, num_layers, num_heads, num_kv_heads, head_dim, ffn_dim, vocab_size, context_length, rope_theta,
      rope_style == RopeStyle::kAdjacentPairs ? "adjacent pairs" : "halves", norm_eps,
      sliding_window > 0 ? absl::StrCat(", sliding window ", sliding_window) : "",
      tied_embeddings ? ", tied embeddings" : "");
}

absl::StatusOr<LlamaConfig> LlamaConfigFromGguf(const GgufFile& gguf) {
  const std::string source = absl::StrCat("gguf '", gguf.path(), "'");
  absl::StatusOr<std::string> arch = gguf.GetString("general.architecture");
  if (!arch.ok()) return arch.status();
  if (*arch != "llama" && *arch != "mistral") {
    return absl::UnimplementedError(absl::StrCat(source, ": architecture '", *arch,
                                                 "' is not supported (Tessel runs \"llama\" and \"mistral\")"));
  }
  const std::string a = *arch + ".";
  LlamaConfig c;
  struct IntKey {
    const char* key;
    int64_t* out;
  };
  for (const IntKey& k : {IntKey{"embedding_length", &c.dim}, IntKey{"block_count", &c.num_layers},
                          IntKey{"attention.head_count", &c.num_heads}, IntKey{"feed_forward_length", &c.ffn_dim},
                          IntKey{"context_length", &c.context_length}}) {
    absl::StatusOr<int64_t> v = gguf.GetInt(a + k.key);
    if (!v.ok()) return v.status();
    *k.out = *v;
  }
  absl::StatusOr<int64_t> kv = gguf.GetIntOr(a + "attention.head_count_kv", c.num_heads);
  absl::StatusOr<double> eps = gguf.GetFloatOr(a + "attention.layer_norm_rms_epsilon", 1e-5);
  absl::StatusOr<double> theta = gguf.GetFloatOr(a + "rope.freq_base", 10000.0);
  absl::StatusOr<int64_t> window = gguf.GetIntOr(a + "attention.sliding_window", 0);
  for (const absl::Status& s : {kv.status(), eps.status(), theta.status(), window.status()}) {
    if (!s.ok()) return s;
  }
  if (absl::Status s = CheckTokenCount(source, a + "context_length", c.context_length); !s.ok()) return s;
  if (absl::Status s = CheckTokenCount(source, a + "attention.sliding_window", *window); !s.ok()) return s;
  c.num_kv_heads = *kv;
  c.norm_eps = static_cast<float>(*eps);
  c.rope_theta = *theta;
  c.sliding_window = *window;
  c.head_dim = c.num_heads > 0 ? c.dim / c.num_heads : 0;
  if (gguf.Has(a + "vocab_size")) {
    absl::StatusOr<int64_t> v = gguf.GetInt(a + "vocab_size");
    if (!v.ok()) return v.status();
    c.vocab_size = *v;
  } else if (const GgufValue* tokens = gguf.Find("tokenizer.ggml.tokens"); tokens != nullptr && tokens->is_array()) {
    c.vocab_size = static_cast<int64_t>(tokens->count);
  } else if (const GgufTensorInfo* emb = gguf.FindTensor("token_embd.weight"); emb != nullptr) {
    c.vocab_size = emb->num_rows();
  }
  c.rope_style = RopeStyle::kAdjacentPairs;
  c.tied_embeddings = gguf.FindTensor("output.weight") == nullptr;
  if (absl::Status s = c.Validate(source); !s.ok()) return s;
  if (gguf.Has(a + "rope.dimension_count")) {
    absl::StatusOr<int64_t> rot = gguf.GetInt(a + "rope.dimension_count");
    if (!rot.ok()) return rot.status();
    if (*rot != c.head_dim) {
      return absl::UnimplementedError(absl::StrCat(source, ": RoPE on ", *rot, " of ", c.head_dim,
                                                   " head dimensions (partial rotary) is not supported"));
    }
  }
  if (gguf.Has(a + "rope.scaling.type")) {
    absl::StatusOr<std::string> scaling = gguf.GetString(a + "rope.scaling.type");
    if (!scaling.ok()) return scaling.status();
    if (*scaling != "none") {
      return absl::UnimplementedError(absl::StrCat(source, ": RoPE scaling '", *scaling, "' is not supported"));
    }
  }
  return c;
}

absl::StatusOr<LlamaConfig> LlamaConfigFromHuggingFace(const json::Value& config, absl::string_view source) {
  if (!config.is_object()) return absl::InvalidArgumentError(absl::StrCat(source, ": not a JSON object"));
  const json::Value* type = config.Find("model_type");
  if (type == nullptr || !type->is_string() || (type->str() != "llama" && type->str() != "mistral")) {
    return absl::UnimplementedError(absl::StrCat(source, ": model_type '",
                                                 type && type->is_string() ? type->str() : "(missing)",
                                                 "' is not supported (Tessel runs \"llama\" and \"mistral\")"));
  }
  auto get_int = [&](const char* key, int64_t* out, bool required) -> absl::Status {
    const json::Value* v = config.Find(key);
    if (v == nullptr || v->is_null()) {
      return required ? absl::NotFoundError(absl::StrCat(source, ": \"", key, "\" is missing")) : absl::OkStatus();
    }
    if (!v->is_integer()) return absl::InvalidArgumentError(absl::StrCat(source, ": \"", key, "\" must be an integer"));
    *out = v->integer();
    return absl::OkStatus();
  };
  auto get_number = [&](const char* key, double* out) -> absl::Status {
    const json::Value* v = config.Find(key);
    if (v == nullptr || v->is_null()) return absl::OkStatus();
    if (!v->is_number()) return absl::InvalidArgumentError(absl::StrCat(source, ": \"", key, "\" must be a number"));
    *out = v->number();
    return absl::OkStatus();
  };
  LlamaConfig c;
  c.context_length = 2048;
  for (const absl::Status& s :
       {get_int("hidden_size", &c.dim, true), get_int("num_hidden_layers", &c.num_layers, true),
        get_int("num_attention_heads", &c.num_heads, true), get_int("intermediate_size", &c.ffn_dim, true),
        get_int("vocab_size", &c.vocab_size, true), get_int("max_position_embeddings", &c.context_length, false),
        get_int("sliding_window", &c.sliding_window, false)}) {
    if (!s.ok()) return s;
  }
  if (absl::Status s = CheckTokenCount(source, "\"max_position_embeddings\"", c.context_length); !s.ok()) return s;
  if (absl::Status s = CheckTokenCount(source, "\"sliding_window\"", c.sliding_window); !s.ok()) return s;
  c.num_kv_heads = c.num_heads;
  double eps = 1e-6, theta = 10000.0;
  for (const absl::Status& s :
       {get_int("num_key_value_heads", &c.num_kv_heads, false), get_number("rms_norm_eps", &eps),
        get_number("rope_theta", &theta)}) {
    if (!s.ok()) return s;
  }
  c.norm_eps = static_cast<float>(eps);
  c.rope_theta = theta;
  c.head_dim = c.num_heads > 0 ? c.dim / c.num_heads : 0;
  int64_t head_dim = c.head_dim;
  if (absl::Status s = get_int("head_dim", &head_dim, false); !s.ok()) return s;
  if (head_dim != c.head_dim) {
    return absl::UnimplementedError(absl::StrCat(source, ": head_dim ", head_dim, " differs from hidden_size / heads (",
                                                 c.head_dim, "), which Tessel does not support"));
  }
  if (const json::Value* scaling = config.Find("rope_scaling"); scaling != nullptr && !scaling->is_null()) {
    return absl::UnimplementedError(absl::StrCat(source, ": rope_scaling is not supported"));
  }
  if (const json::Value* act = config.Find("hidden_act"); act != nullptr && act->is_string() && act->str() != "silu") {
    return absl::UnimplementedError(absl::StrCat(source, ": hidden_act '", act->str(), "' is not supported (silu only)"));
  }
  const json::Value* tied = config.Find("tie_word_embeddings");
  c.tied_embeddings = tied != nullptr && tied->is_bool() && tied->bool_value();
  c.rope_style = RopeStyle::kHalves;
  if (absl::Status s = c.Validate(source); !s.ok()) return s;
  return c;
}

}  // namespace tessel::llm
