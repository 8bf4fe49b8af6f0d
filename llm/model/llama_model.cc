// Model loading: tensor lookup, type and shape checks, tied embeddings, norms to f32.
#include "llm/model/llama_model.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "support/thread_pool.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "support/mapped_file.h"
#include "llm/gguf/gguf.h"
#include "support/json.h"
#include "llm/matmul/row_dot.h"
#include "llm/safetensors/safetensors.h"

namespace tessel::llm {
namespace {

std::string Shape(std::vector<int64_t> dims) { return absl::StrCat("[", absl::StrJoin(dims, ", "), "]"); }

absl::Status CheckMatrix(const std::string& source, const std::string& name, GgmlType type, int64_t rows, int64_t cols,
                         int64_t want_rows, int64_t want_cols) {
  if (!GetGgmlTypeInfo(type).supported) {
    return absl::UnimplementedError(absl::StrCat(source, ": tensor '", name, "' has type ", GgmlTypeName(type),
                                                 ", which Tessel cannot compute with (supported: ",
                                                 SupportedGgmlTypeNames(), ")"));
  }
  if (rows != want_rows || cols != want_cols) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": tensor '", name, "' is ", rows, " x ", cols,
                                                   " (rows x columns) but the configuration needs ", want_rows, " x ",
                                                   want_cols));
  }
  return absl::OkStatus();
}

// GGUF tensors: ggml dims are [cols, rows].
class GgufSource {
 public:
  explicit GgufSource(const GgufFile& f) : f_(f), source_(absl::StrCat("gguf '", f.path(), "'")) {}

  absl::StatusOr<WeightMatrix> Matrix(const std::string& name, int64_t rows, int64_t cols) const {
    absl::StatusOr<const GgufTensorInfo*> t = f_.GetTensor(name);
    if (!t.ok()) return t.status();
    const GgufTensorInfo& info = **t;
    if (info.dims.size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat(source_, ": tensor '", name, "' has shape ", info.ShapeString(), "; expected a matrix"));
    }
    if (absl::Status s = CheckMatrix(source_, name, info.type, info.dims[1], info.dims[0], rows, cols); !s.ok()) {
      return s;
    }
    return WeightMatrix{info.type, rows, cols, info.data};
  }

  absl::StatusOr<std::vector<float>> Vector(const std::string& name, int64_t n) const {
    absl::StatusOr<const GgufTensorInfo*> t = f_.GetTensor(name);
    if (!t.ok()) return t.status();
    const GgufTensorInfo& info = **t;
    if (info.num_elements() != n || info.dims.size() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(source_, ": tensor '", name, "' has shape ", info.ShapeString(), "; expected [", n, "]"));
    }
    if (info.type != GgmlType::kF32 && info.type != GgmlType::kF16 && info.type != GgmlType::kBF16) {
      return absl::UnimplementedError(absl::StrCat(source_, ": norm weight '", name, "' has type ",
                                                   GgmlTypeName(info.type), "; expected F32, F16 or BF16"));
    }
    std::vector<float> out(n);
    DequantizeRow(info.type, info.data, out.data(), n);
    return out;
  }

 private:
  const GgufFile& f_;
  std::string source_;
};

// safetensors tensors: PyTorch shapes are [rows, cols]. Misaligned tensors are copied so that
// kernels can load elements directly.
class HfSource {
 public:
  HfSource(const SafetensorsDir& d, std::vector<std::shared_ptr<const void>>* storage)
      : d_(d), storage_(storage), source_(absl::StrCat("model directory '", d.dir(), "'")) {}

  absl::StatusOr<GgmlType> TypeOf(const SafetensorsTensor& t) const {
    if (t.dtype == "F32") return GgmlType::kF32;
    if (t.dtype == "F16") return GgmlType::kF16;
    if (t.dtype == "BF16") return GgmlType::kBF16;
    return absl::UnimplementedError(
        absl::StrCat(source_, ": tensor '", t.name, "' has dtype ", t.dtype, " (supported: F32, F16, BF16)"));
  }

  const uint8_t* Aligned(const SafetensorsTensor& t) const {
    if (reinterpret_cast<uintptr_t>(t.data) % t.element_bytes == 0) return t.data;
    std::shared_ptr<uint8_t> copy(new uint8_t[t.size_bytes], std::default_delete<uint8_t[]>());
    std::memcpy(copy.get(), t.data, t.size_bytes);
    storage_->push_back(copy);
    return copy.get();
  }

  absl::StatusOr<WeightMatrix> Matrix(const std::string& name, int64_t rows, int64_t cols) const {
    absl::StatusOr<const SafetensorsTensor*> t = d_.Get(name);
    if (!t.ok()) return t.status();
    absl::StatusOr<GgmlType> type = TypeOf(**t);
    if (!type.ok()) return type.status();
    if ((*t)->shape.size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat(source_, ": tensor '", name, "' has shape ", Shape((*t)->shape), "; expected a matrix"));
    }
    if (absl::Status s = CheckMatrix(source_, name, *type, (*t)->shape[0], (*t)->shape[1], rows, cols); !s.ok()) {
      return s;
    }
    return WeightMatrix{*type, rows, cols, Aligned(**t)};
  }

  absl::StatusOr<std::vector<float>> Vector(const std::string& name, int64_t n) const {
    absl::StatusOr<const SafetensorsTensor*> t = d_.Get(name);
    if (!t.ok()) return t.status();
    absl::StatusOr<GgmlType> type = TypeOf(**t);
    if (!type.ok()) return type.status();
    if ((*t)->shape != std::vector<int64_t>{n}) {
      return absl::InvalidArgumentError(
          absl::StrCat(source_, ": tensor '", name, "' has shape ", Shape((*t)->shape), "; expected [", n, "]"));
    }
    std::vector<float> out(n);
    DequantizeRow(*type, Aligned(**t), out.data(), n);
    return out;
  }

 private:
  const SafetensorsDir& d_;
  std::vector<std::shared_ptr<const void>>* storage_;
  std::string source_;
};

struct TensorNames {
  std::string embedding, output_norm, output;
  std::string (*layer)(int64_t layer, const char* part);
};

template <typename Source>
absl::StatusOr<LlamaWeights> LoadWeights(const Source& src, const LlamaConfig& c, const TensorNames& names) {
  LlamaWeights w;
  const int64_t q_rows = c.num_heads * c.head_dim;
  const int64_t kv_rows = c.num_kv_heads * c.head_dim;
  absl::StatusOr<WeightMatrix> emb = src.Matrix(names.embedding, c.vocab_size, c.dim);
  if (!emb.ok()) return emb.status();
  w.token_embedding = *emb;
  for (int64_t l = 0; l < c.num_layers; ++l) {
    LlamaLayerWeights lw;
    struct M {
      const char* part;
      WeightMatrix* out;
      int64_t rows, cols;
    };
    for (const M& m : {M{"wq", &lw.wq, q_rows, c.dim}, M{"wk", &lw.wk, kv_rows, c.dim},
                       M{"wv", &lw.wv, kv_rows, c.dim}, M{"wo", &lw.wo, c.dim, q_rows},
                       M{"w_gate", &lw.w_gate, c.ffn_dim, c.dim}, M{"w_up", &lw.w_up, c.ffn_dim, c.dim},
                       M{"w_down", &lw.w_down, c.dim, c.ffn_dim}}) {
      absl::StatusOr<WeightMatrix> mat = src.Matrix(names.layer(l, m.part), m.rows, m.cols);
      if (!mat.ok()) return mat.status();
      *m.out = *mat;
    }
    absl::StatusOr<std::vector<float>> an = src.Vector(names.layer(l, "attn_norm"), c.dim);
    if (!an.ok()) return an.status();
    absl::StatusOr<std::vector<float>> fn = src.Vector(names.layer(l, "ffn_norm"), c.dim);
    if (!fn.ok()) return fn.status();
    lw.attn_norm = *std::move(an);
    lw.ffn_norm = *std::move(fn);
    w.layers.push_back(std::move(lw));
  }
  absl::StatusOr<std::vector<float>> on = src.Vector(names.output_norm, c.dim);
  if (!on.ok()) return on.status();
  w.output_norm = *std::move(on);
  if (c.tied_embeddings) {
    w.output = w.token_embedding;
  } else {
    absl::StatusOr<WeightMatrix> out = src.Matrix(names.output, c.vocab_size, c.dim);
    if (!out.ok()) return out.status();
    w.output = *out;
  }
  return w;
}

std::string GgufLayerName(int64_t l, const char* part) {
  static constexpr struct {
    const char* part;
    const char* name;
  } kNames[] = {{"wq", "attn_q"},         {"wk", "attn_k"},       {"wv", "attn_v"},
                {"wo", "attn_output"},    {"w_gate", "ffn_gate"}, {"w_up", "ffn_up"},
                {"w_down", "ffn_down"},   {"attn_norm", "attn_norm"}, {"ffn_norm", "ffn_norm"}};
  for (const auto& n : kNames) {
    if (std::strcmp(n.part, part) == 0) return absl::StrCat("blk.", l, ".", n.name, ".weight");
  }
  return "";
}

std::string HfLayerName(int64_t l, const char* part) {
  static constexpr struct {
    const char* part;
    const char* name;
  } kNames[] = {{"wq", "self_attn.q_proj"},    {"wk", "self_attn.k_proj"},
                {"wv", "self_attn.v_proj"},    {"wo", "self_attn.o_proj"},
                {"w_gate", "mlp.gate_proj"},   {"w_up", "mlp.up_proj"},
                {"w_down", "mlp.down_proj"},   {"attn_norm", "input_layernorm"},
                {"ffn_norm", "post_attention_layernorm"}};
  for (const auto& n : kNames) {
    if (std::strcmp(n.part, part) == 0) return absl::StrCat("model.layers.", l, ".", n.name, ".weight");
  }
  return "";
}

}  // namespace

std::string LlamaModel::WeightTypeSummary() const {
  const GgmlType t = weights_.layers.empty() ? weights_.output.type : weights_.layers[0].wq.type;
  for (const LlamaLayerWeights& l : weights_.layers) {
    for (const WeightMatrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) {
      if (m->type != t) return "mixed";
    }
  }
  return std::string(GgmlTypeName(t));
}

size_t LlamaModel::WeightBytesPerToken() const {
  size_t bytes = weights_.output.bytes();
  for (const LlamaLayerWeights& l : weights_.layers) {
    for (const WeightMatrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) bytes += m->bytes();
  }
  return bytes;
}

namespace {

// fn(matrix) for every matmul weight; Weights is LlamaWeights or const LlamaWeights.
template <typename Weights, typename Fn>
void ForEachMatmulWeight(Weights& w, Fn fn) {
  for (auto& l : w.layers) {
    for (auto* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) fn(*m);
  }
  fn(w.output);
}

}  // namespace

std::string LlamaModel::WeightLayoutSummary() const {
  int panel16 = 0, blocks = 0, rows = 0;
  ForEachMatmulWeight(weights_, [&](const WeightMatrix& m) {
    (m.layout == WeightLayout::kPanel16 ? panel16 : m.layout == WeightLayout::kColumnBlocks ? blocks : rows) += 1;
  });
  if (panel16 > 0) {
    if (rows == 0 && blocks == 0) return "Panel16";
    // E.g. a tessel-quantized model whose output head kept its F16 rows.
    std::string s = "Panel16 for " + std::to_string(panel16) + " matrices";
    if (rows > 0) s += ", ggml rows for " + std::to_string(rows);
    if (blocks > 0) s += ", column blocks for " + std::to_string(blocks);
    return s;
  }
  if (blocks > 0) return "ggml rows, column blocks for " + std::to_string(blocks) + " wide matrices";
  return "ggml rows";
}

namespace {

size_t DecodeBytes(const WeightMatrix& m) {
  // Multiples of 64 (Panel16 pads; the others round up): every matrix stays 64-byte aligned.
  return *DecodeLayout(m) == WeightLayout::kPanel16 ? Panel16Bytes(m) : (m.bytes() + 63) / 64 * 64;
}

}  // namespace

bool LlamaModel::CanRepackForDecode() const {
  bool all = true;
  ForEachMatmulWeight(weights_, [&](const WeightMatrix& m) { all = all && DecodeLayout(m).has_value(); });
  return all;
}

absl::Status LlamaModel::RepackForDecode(int threads) {
  size_t total = 0;
  ForEachMatmulWeight(weights_, [&](const WeightMatrix& m) { total += DecodeBytes(m); });
  absl::StatusOr<std::shared_ptr<uint8_t>> buffer = AllocateHugePageBuffer(total, "the repacked weights");
  if (!buffer.ok()) return buffer.status();
  // Every matrix's place in the buffer, then the matrices repacked on `threads` (each job reads its own
  // file rows and writes its own range): the packers and the page faults of both sides are most of a
  // load.
  std::vector<std::pair<WeightMatrix*, uint8_t*>> jobs;
  size_t offset = 0;
  ForEachMatmulWeight(weights_, [&](WeightMatrix& m) {
    jobs.emplace_back(&m, buffer->get() + offset);
    offset += DecodeBytes(m);
  });
  if (threads <= 0) threads = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
  ThreadPool pool(threads);
  pool.Run(static_cast<int64_t>(jobs.size()), [&](int64_t j, int) {
    WeightMatrix& m = *jobs[j].first;
    uint8_t* dst = jobs[j].second;
    switch (*DecodeLayout(m)) {
      case WeightLayout::kPanel16:
        m = llm::RepackPanel16(m, dst);
        break;
      case WeightLayout::kColumnBlocks:
        m = RepackColumnBlocks(m, dst);
        break;
      case WeightLayout::kRows:
        std::memcpy(dst, m.data, m.bytes());
        m.data = dst;
        break;
    }
  });
  storage_.push_back(*std::move(buffer));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<LlamaModel>> ModelFromGguf(std::unique_ptr<GgufFile> gguf);

absl::StatusOr<std::unique_ptr<LlamaModel>> LoadGgufModel(const std::string& path, FileLoad load, int threads) {
  // Map first (only the header is read): if every matmul weight can be repacked (Panel16, column
  // blocks, or a plain copy), the repacked copy is all decode streams and the file stays mapped;
  // otherwise copy the whole file.
  absl::StatusOr<std::unique_ptr<GgufFile>> gguf = GgufFile::Open(path, FileLoad::kMap);
  if (!gguf.ok()) return gguf.status();
  const std::shared_ptr<const MappedFile> file = (*gguf)->file();
  absl::StatusOr<std::unique_ptr<LlamaModel>> m = ModelFromGguf(*std::move(gguf));
  if (!m.ok() || load == FileLoad::kMap) return m;
  if (!(*m)->CanRepackForDecode()) {
    gguf = GgufFile::Open(path, FileLoad::kHugePageCopy);
    if (!gguf.ok()) return gguf.status();
    return ModelFromGguf(*std::move(gguf));
  }
  file->Prefault();
  if (absl::Status s = (*m)->RepackForDecode(threads); !s.ok()) return s;
  // The matmul weights are read from the copy from now on; the embedding and norms fault back in.
  file->ReleasePages();
  return m;
}

absl::StatusOr<std::unique_ptr<LlamaModel>> ModelFromGguf(std::unique_ptr<GgufFile> gguf_file) {
  absl::StatusOr<std::unique_ptr<GgufFile>> gguf = std::move(gguf_file);
  const std::string path = (*gguf)->path();
  std::unique_ptr<LlamaModel> m(new LlamaModel());
  absl::StatusOr<LlamaConfig> config = LlamaConfigFromGguf(**gguf);
  if (!config.ok()) return config.status();
  m->config_ = *config;
  const TensorNames names{"token_embd.weight", "output_norm.weight", "output.weight", GgufLayerName};
  absl::StatusOr<LlamaWeights> weights = LoadWeights(GgufSource(**gguf), m->config_, names);
  if (!weights.ok()) return weights.status();
  m->weights_ = *std::move(weights);
  absl::StatusOr<std::unique_ptr<Tokenizer>> tok = Tokenizer::FromGguf(**gguf);
  if (!tok.ok()) return tok.status();
  m->tokenizer_ = *std::move(tok);
  if (m->tokenizer_->vocab_size() > m->config_.vocab_size) {
    return absl::InvalidArgumentError(absl::StrCat("gguf '", path, "': the tokenizer has ",
                                                   m->tokenizer_->vocab_size(), " tokens but the model only ",
                                                   m->config_.vocab_size));
  }
  m->source_ = path;
  m->storage_.push_back(std::shared_ptr<const GgufFile>(std::move(*gguf)));
  return m;
}

// The model of a Hugging Face directory with its safetensors opened as `load` says; *files_out: them.
absl::StatusOr<std::unique_ptr<LlamaModel>> ModelFromHuggingFace(const std::string& dir, FileLoad load,
                                                                 std::shared_ptr<const SafetensorsDir>* files_out);

absl::StatusOr<std::unique_ptr<LlamaModel>> LoadHuggingFaceModel(const std::string& dir, FileLoad load,
                                                                 int threads) {
  // As LoadGgufModel: map first; if every matmul weight can be repacked for decode (F16 / BF16 on CPUs
  // with the AVX-512 row kernels: column blocks for wide matrices, a huge-page copy of the others),
  // repack, then drop the mapped pages (the embedding rows and norms fault back in); otherwise copy
  // the files whole.
  std::shared_ptr<const SafetensorsDir> files;
  absl::StatusOr<std::unique_ptr<LlamaModel>> m = ModelFromHuggingFace(dir, FileLoad::kMap, &files);
  if (!m.ok() || load == FileLoad::kMap) return m;
  if (!(*m)->CanRepackForDecode()) return ModelFromHuggingFace(dir, load, &files);
  files->Prefault();
  if (absl::Status s = (*m)->RepackForDecode(threads); !s.ok()) return s;
  files->ReleasePages();
  return m;
}

absl::StatusOr<std::unique_ptr<LlamaModel>> ModelFromHuggingFace(const std::string& dir, FileLoad load,
                                                                 std::shared_ptr<const SafetensorsDir>* files_out) {
  const std::string config_path = absl::StrCat(dir, "/config.json");
  absl::StatusOr<std::string> config_text = ReadFileToString(config_path);
  if (!config_text.ok()) return config_text.status();
  absl::StatusOr<json::Value> config_json = json::Parse(*config_text, config_path);
  if (!config_json.ok()) return config_json.status();
  std::unique_ptr<LlamaModel> m(new LlamaModel());
  absl::StatusOr<LlamaConfig> config = LlamaConfigFromHuggingFace(*config_json, config_path);
  if (!config.ok()) return config.status();
  m->config_ = *config;
  absl::StatusOr<std::unique_ptr<SafetensorsDir>> files = SafetensorsDir::Open(dir, load);
  if (!files.ok()) return files.status();
  // Checkpoints saved with tied embeddings sometimes still carry lm_head.weight.
  if (m->config_.tied_embeddings && (*files)->Find("lm_head.weight") != nullptr) m->config_.tied_embeddings = false;
  const TensorNames names{"model.embed_tokens.weight", "model.norm.weight", "lm_head.weight", HfLayerName};
  absl::StatusOr<LlamaWeights> weights = LoadWeights(HfSource(**files, &m->storage_), m->config_, names);
  if (!weights.ok()) return weights.status();
  m->weights_ = *std::move(weights);
  const std::string tok_path = absl::StrCat(dir, "/tokenizer.json");
  absl::StatusOr<std::string> tok_text = ReadFileToString(tok_path);
  if (!tok_text.ok()) return tok_text.status();
  absl::StatusOr<json::Value> tok_json = json::Parse(*tok_text, tok_path);
  if (!tok_json.ok()) return tok_json.status();
  auto token_id = [&](const char* key) -> int32_t {
    const json::Value* v = config_json->Find(key);
    return v != nullptr && v->is_integer() ? static_cast<int32_t>(v->integer()) : -1;
  };
  absl::StatusOr<std::unique_ptr<Tokenizer>> tok =
      Tokenizer::FromHuggingFaceJson(*tok_json, token_id("bos_token_id"), token_id("eos_token_id"), tok_path);
  if (!tok.ok()) return tok.status();
  m->tokenizer_ = *std::move(tok);
  if (m->tokenizer_->vocab_size() > m->config_.vocab_size) {
    return absl::InvalidArgumentError(absl::StrCat(tok_path, ": the tokenizer has ", m->tokenizer_->vocab_size(),
                                                   " tokens but the model only ", m->config_.vocab_size));
  }
  m->source_ = dir;
  *files_out = std::shared_ptr<const SafetensorsDir>(std::move(*files));
  m->storage_.push_back(*files_out);
  return m;
}

absl::StatusOr<std::unique_ptr<LlamaModel>> LoadModel(const std::string& path, FileLoad load, int threads) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat("model '", path, "' does not exist"));
  }
  if (S_ISDIR(st.st_mode)) return LoadHuggingFaceModel(path, load, threads);
  return LoadGgufModel(path, load, threads);
}

}  // namespace tessel::llm
