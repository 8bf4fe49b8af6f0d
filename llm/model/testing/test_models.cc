// Random-weight Llama GGUF files in llama.cpp's layout.
#include "llm/model/testing/test_models.h"

#include <sys/stat.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "llm/gguf/gguf.h"

namespace tessel::llm::testing {
namespace {

// Bell-shaped weights from integers: the sum of the four bytes of one generator output (an
// Irwin-Hall sum, mean 510, standard deviation 147.8) scaled to standard deviation `scale`. Tests run
// under qemu-aarch64 too, where std::normal_distribution's logf, sqrtf and divisions are emulated and
// made writing the test models most of their run time.
std::string Matrix(GgmlType type, int rows, int cols, float scale, std::mt19937& rng) {
  const float unit = scale / 147.8f;
  std::vector<float> row(cols);
  std::string out(GgmlRowBytes(type, cols) * rows, '\0');
  for (int r = 0; r < rows; ++r) {
    for (float& v : row) {
      const uint32_t u = rng();
      const int sum = static_cast<int>((u & 255) + ((u >> 8) & 255) + ((u >> 16) & 255) + (u >> 24));
      v = static_cast<float>(sum - 510) * unit;
    }
    QuantizeRow(type, row.data(), &out[r * GgmlRowBytes(type, cols)], cols);
  }
  return out;
}

std::string Norm(int n, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(0.8f, 1.2f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return std::string(reinterpret_cast<const char*>(v.data()), n * sizeof(float));
}

void Add(GgufWriter& w, const std::string& name, GgmlType type, std::vector<int64_t> dims, const std::string& data) {
  const absl::Status s = w.AddTensor(name, type, std::move(dims), data);
  if (!s.ok()) std::abort();  // a bug in this helper, not in the code under test
}

}  // namespace

GgufWriter MakeSyntheticLlama(const SyntheticModelSpec& s) {
  GgufWriter w;
  const int hd = s.dim / s.heads;
  w.SetString("general.architecture", "llama");
  w.SetString("general.name", "synthetic");
  w.SetUint32("llama.context_length", s.context);
  w.SetUint32("llama.embedding_length", s.dim);
  w.SetUint32("llama.block_count", s.layers);
  w.SetUint32("llama.feed_forward_length", s.ffn);
  w.SetUint32("llama.rope.dimension_count", hd);
  w.SetUint32("llama.attention.head_count", s.heads);
  w.SetUint32("llama.attention.head_count_kv", s.kv_heads);
  w.SetFloat32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.SetFloat32("llama.rope.freq_base", 10000.0f);
  if (s.sliding_window > 0) w.SetUint32("llama.attention.sliding_window", s.sliding_window);

  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<int32_t> types = {2, 3, 3};
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(absl::StrFormat("<0x%02X>", b));
    types.push_back(6);
  }
  tokens.push_back("\xe2\x96\x81");
  types.push_back(1);
  for (int i = 0; static_cast<int>(tokens.size()) < s.vocab; ++i) {
    tokens.push_back(i < 26 ? std::string(1, static_cast<char>('a' + i)) : absl::StrCat("tok", i));
    types.push_back(1);
  }
  std::vector<float> scores(tokens.size());
  for (size_t i = 0; i < scores.size(); ++i) scores[i] = -static_cast<float>(i);
  w.SetString("tokenizer.ggml.model", "llama");
  w.SetStringArray("tokenizer.ggml.tokens", tokens);
  w.SetFloat32Array("tokenizer.ggml.scores", scores);
  w.SetInt32Array("tokenizer.ggml.token_type", types);
  w.SetUint32("tokenizer.ggml.bos_token_id", 1);
  w.SetUint32("tokenizer.ggml.eos_token_id", 2);

  std::mt19937 rng(s.seed);
  const float in_scale = 1.0f / std::sqrt(static_cast<float>(s.dim));
  Add(w, "token_embd.weight", s.type, {s.dim, s.vocab}, Matrix(s.type, s.vocab, s.dim, 1.0f, rng));
  for (int l = 0; l < s.layers; ++l) {
    const std::string p = absl::StrCat("blk.", l, ".");
    Add(w, p + "attn_norm.weight", GgmlType::kF32, {s.dim}, Norm(s.dim, rng));
    Add(w, p + "attn_q.weight", s.type, {s.dim, s.heads * hd}, Matrix(s.type, s.heads * hd, s.dim, in_scale, rng));
    Add(w, p + "attn_k.weight", s.type, {s.dim, s.kv_heads * hd}, Matrix(s.type, s.kv_heads * hd, s.dim, in_scale, rng));
    Add(w, p + "attn_v.weight", s.type, {s.dim, s.kv_heads * hd}, Matrix(s.type, s.kv_heads * hd, s.dim, in_scale, rng));
    Add(w, p + "attn_output.weight", s.type, {s.heads * hd, s.dim}, Matrix(s.type, s.dim, s.heads * hd, in_scale, rng));
    Add(w, p + "ffn_norm.weight", GgmlType::kF32, {s.dim}, Norm(s.dim, rng));
    Add(w, p + "ffn_gate.weight", s.type, {s.dim, s.ffn}, Matrix(s.type, s.ffn, s.dim, in_scale, rng));
    Add(w, p + "ffn_up.weight", s.type, {s.dim, s.ffn}, Matrix(s.type, s.ffn, s.dim, in_scale, rng));
    Add(w, p + "ffn_down.weight", s.type, {s.ffn, s.dim},
        Matrix(s.type, s.dim, s.ffn, 1.0f / std::sqrt(static_cast<float>(s.ffn)), rng));
  }
  Add(w, "output_norm.weight", GgmlType::kF32, {s.dim}, Norm(s.dim, rng));
  if (!s.tied) Add(w, "output.weight", s.type, {s.dim, s.vocab}, Matrix(s.type, s.vocab, s.dim, in_scale, rng));
  return w;
}

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/", name);
}

std::string WriteSyntheticLlama(const SyntheticModelSpec& spec, const std::string& name) {
  const std::string path = TempPath(name);
  if (!MakeSyntheticLlama(spec).WriteFile(path).ok()) std::abort();
  return path;
}

absl::Status ConvertGguf(const std::string& in, const std::string& out, GgmlType type) {
  absl::StatusOr<std::unique_ptr<GgufFile>> f = GgufFile::Open(in);
  if (!f.ok()) return f.status();
  GgufWriter w;
  w.CopyMetadata(**f);
  for (const GgufTensorInfo& t : (*f)->tensors()) {
    if (t.dims.size() != 2) {
      const absl::string_view bytes(reinterpret_cast<const char*>(t.data), t.size_bytes);
      if (absl::Status s = w.AddTensor(t.name, t.type, t.dims, bytes); !s.ok()) return s;
      continue;
    }
    const int64_t rows = t.num_rows(), cols = t.row_length();
    std::vector<float> row(cols);
    std::string data(GgmlRowBytes(type, cols) * rows, '\0');
    for (int64_t r = 0; r < rows; ++r) {
      DequantizeRow(t.type, t.data + r * GgmlRowBytes(t.type, cols), row.data(), cols);
      QuantizeRow(type, row.data(), &data[r * GgmlRowBytes(type, cols)], cols);
    }
    if (absl::Status s = w.AddTensor(t.name, type, t.dims, data); !s.ok()) return s;
  }
  return w.WriteFile(out);
}

std::string WriteSyntheticHuggingFace(const SyntheticModelSpec& spec, const std::string& name) {
  const std::string gguf_path = TempPath(name + ".gguf");
  if (!MakeSyntheticLlama(spec).WriteFile(gguf_path).ok()) std::abort();
  absl::StatusOr<std::unique_ptr<GgufFile>> f = GgufFile::Open(gguf_path);
  if (!f.ok()) std::abort();
  const std::string dir = TempPath(name);
  ::mkdir(dir.c_str(), 0755);
  auto write = [](const std::string& path, const std::string& text) {
    std::FILE* out = std::fopen(path.c_str(), "wb");
    if (out == nullptr || std::fwrite(text.data(), 1, text.size(), out) != text.size()) std::abort();
    std::fclose(out);
  };
  write(dir + "/config.json",
        absl::StrCat("{\"model_type\": \"llama\", \"hidden_size\": ", spec.dim,
                     ", \"num_hidden_layers\": ", spec.layers,
                     ", \"num_attention_heads\": ", spec.heads, ", \"num_key_value_heads\": ", spec.kv_heads,
                     ", \"intermediate_size\": ", spec.ffn, ", \"vocab_size\": ", spec.vocab,
                     ", \"max_position_embeddings\": ", spec.context,
                     ", \"rms_norm_eps\": 1e-05, \"rope_theta\": 10000.0, \"tie_word_embeddings\": ",
                     spec.tied ? "true" : "false", ", \"bos_token_id\": 1, \"eos_token_id\": 2}"));
  // tokenizer.json: the GGUF vocabulary, its last token renamed "ab" and made by the one merge.
  absl::StatusOr<absl::Span<const absl::string_view>> tokens = (*f)->GetStringArray("tokenizer.ggml.tokens");
  if (!tokens.ok()) std::abort();
  std::string vocab;
  for (size_t i = 0; i < tokens->size(); ++i) {
    std::string t = i + 1 == tokens->size() ? "ab" : std::string((*tokens)[i]);
    absl::StrAppend(&vocab, i ? ", " : "", "\"", t, "\": ", i);
  }
  write(dir + "/tokenizer.json",
        absl::StrCat("{\"model\": {\"type\": \"BPE\", \"byte_fallback\": true, \"unk_token\": \"<unk>\", \"vocab\": {",
                     vocab, "}, \"merges\": [\"a b\"]}, \"added_tokens\": [",
                     "{\"id\": 0, \"content\": \"<unk>\", \"special\": true}, ",
                     "{\"id\": 1, \"content\": \"<s>\", \"special\": true}, ",
                     "{\"id\": 2, \"content\": \"</s>\", \"special\": true}], ",
                     "\"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Prepend\", ",
                     "\"prepend\": \"\xe2\x96\x81\"}, {\"type\": \"Replace\"}]}}"));
  // model.safetensors: every GGUF tensor under its Hugging Face name, matrices as [rows, cols].
  auto hf_name = [](const std::string& g) -> std::string {
    if (g == "token_embd.weight") return "model.embed_tokens.weight";
    if (g == "output_norm.weight") return "model.norm.weight";
    if (g == "output.weight") return "lm_head.weight";
    const size_t a = g.find('.', 4), b = g.rfind('.');
    const std::string layer = g.substr(4, a - 4), part = g.substr(a + 1, b - a - 1);
    const std::pair<const char*, const char*> parts[] = {
        {"attn_norm", "input_layernorm"},        {"ffn_norm", "post_attention_layernorm"},
        {"attn_q", "self_attn.q_proj"},          {"attn_k", "self_attn.k_proj"},
        {"attn_v", "self_attn.v_proj"},          {"attn_output", "self_attn.o_proj"},
        {"ffn_gate", "mlp.gate_proj"},           {"ffn_up", "mlp.up_proj"},
        {"ffn_down", "mlp.down_proj"}};
    for (const auto& [from, to] : parts) {
      if (part == from) return absl::StrCat("model.layers.", layer, ".", to, ".weight");
    }
    std::abort();
  };
  std::string header = "{", data;
  for (const GgufTensorInfo& t : (*f)->tensors()) {
    const char* dtype = t.type == GgmlType::kF32 ? "F32" : t.type == GgmlType::kF16 ? "F16" : "BF16";
    const std::string shape = t.dims.size() == 1 ? absl::StrCat("[", t.dims[0], "]")
                                                 : absl::StrCat("[", t.dims[1], ", ", t.dims[0], "]");
    absl::StrAppend(&header, header.size() > 1 ? ", " : "", "\"", hf_name(t.name), "\": {\"dtype\": \"", dtype,
                    "\", \"shape\": ", shape, ", \"data_offsets\": [", data.size(), ", ",
                    data.size() + t.size_bytes, "]}");
    data.append(reinterpret_cast<const char*>(t.data), t.size_bytes);
  }
  header += "}";
  while (header.size() % 8 != 0) header += ' ';
  const uint64_t n = header.size();
  write(dir + "/model.safetensors", std::string(reinterpret_cast<const char*>(&n), 8) + header + data);
  return dir;
}

}  // namespace tessel::llm::testing
