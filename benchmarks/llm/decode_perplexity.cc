// Perplexity computed through decode: every token of each chunk is one Eval (the GEMV path), unlike
// `tessel perplexity`, which scores whole chunks through the prefill GEMM. Measures what the decode
// kernels' numerics (int8-quantized activations for Q4_0 / Q8_0) do to model quality; run it once
// as is and once with TESSEL_FORCE_BACKEND=<an f32-input gemv kernel> to compare.
// Usage: decode_perplexity MODEL.gguf TEXT_FILE [CTX=256] [MAX_CHUNKS=0 (all)]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/gemv/gemv.h"
#include "llm/model/llama_model.h"
#include "llm/model/llama_runtime.h"

int main(int argc, char** argv) {
  using namespace tessel;
  using namespace tessel::llm;
  if (argc < 3) {
    std::fprintf(stderr, "usage: decode_perplexity MODEL.gguf TEXT_FILE [CTX] [MAX_CHUNKS]\n");
    return 1;
  }
  const int64_t ctx = argc > 3 ? std::atoll(argv[3]) : 256;
  const int64_t max_chunks = argc > 4 ? std::atoll(argv[4]) : 0;
  std::ifstream in(argv[2]);
  if (!in || ctx < 2) {
    std::fprintf(stderr, "decode_perplexity: cannot read %s or CTX < 2\n", argv[2]);
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::unique_ptr<LlamaModel>> model = LoadModel(argv[1]);
  if (!model.ok()) {
    std::fprintf(stderr, "decode_perplexity: %s\n", model.status().ToString().c_str());
    return 1;
  }
  RuntimeOptions o;
  o.max_context = ctx;
  absl::StatusOr<std::unique_ptr<LlamaRuntime>> rt = LlamaRuntime::Create(**model, o);
  if (!rt.ok()) {
    std::fprintf(stderr, "decode_perplexity: %s\n", rt.status().ToString().c_str());
    return 1;
  }
  const Tokenizer& tok = (*model)->tokenizer();
  const std::vector<int32_t> tokens = tok.Encode(text.str(), /*add_special=*/false);
  const int64_t per_chunk = ctx - 1;  // BOS first
  int64_t chunks = static_cast<int64_t>(tokens.size()) / per_chunk;
  if (max_chunks > 0 && chunks > max_chunks) chunks = max_chunks;
  const int seq = *(*rt)->NewSequence();
  double nll = 0;
  int64_t scored = 0;
  for (int64_t c = 0; c < chunks; ++c) {
    (void)(*rt)->ResetSequence(seq);
    std::vector<int32_t> chunk = {tok.bos()};
    chunk.insert(chunk.end(), tokens.begin() + c * per_chunk, tokens.begin() + (c + 1) * per_chunk);
    for (size_t i = 0; i + 1 < chunk.size(); ++i) {
      absl::StatusOr<absl::Span<const float>> logits = (*rt)->Eval(seq, absl::MakeConstSpan(&chunk[i], 1));
      if (!logits.ok()) {
        std::fprintf(stderr, "decode_perplexity: %s\n", logits.status().ToString().c_str());
        return 1;
      }
      float mx = (*logits)[0];
      for (float v : *logits) mx = std::max(mx, v);
      double sum = 0;
      for (float v : *logits) sum += std::exp(static_cast<double>(v) - mx);
      nll -= static_cast<double>((*logits)[chunk[i + 1]]) - mx - std::log(sum);
      ++scored;
    }
  }
  const GemvKernel* q4 = FastGemvQ8Kernel(GemvFormat::kQ4_0);
  std::printf("%lld tokens scored by decode; q4_0 decode kernel: %s; decode perplexity: %.4f\n",
              static_cast<long long>(scored), q4 ? q4->name.c_str() : SelectedGemvKernel(GemvFormat::kQ4_0).name.c_str(),
              std::exp(nll / scored));
  return 0;
}
