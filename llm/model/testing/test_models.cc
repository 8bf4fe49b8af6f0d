// Random-weight Llama GGUF files in llama.cpp's layout.
#include "llm/model/testing/test_models.h"

#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "llm/gguf/gguf.h"

namespace tessel::llm::testing {
namespace {

std::string Matrix(GgmlType type, int rows, int cols, float scale, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> row(cols);
  std::string out(GgmlRowBytes(type, cols) * rows, '\0');
  for (int r = 0; r < rows; ++r) {
    for (float& v : row) v = dist(rng);
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

}  // namespace tessel::llm::testing
