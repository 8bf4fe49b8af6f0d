// llama.cpp's side of the Arm lab's LLM rows: loads a GGUF, runs a prompt of P tokens as one batch,
// then D greedy decode steps, on one thread, so that two runs differing only in P or D differ by
// exactly the prefill or decode work (benchmarks/arm/run.sh takes such differences under qemu).
// Built against llama.cpp's static libraries by benchmarks/arm/build_llama_cpp.sh.
//
//   llama_steps MODEL.gguf P D
//
// The prompt is BOS followed by P - 1 single-letter words ("a b c ..."), one token each in
// make_bench_gguf.py's vocabulary, the same text Tessel's side gets.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "llama.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: llama_steps MODEL.gguf PROMPT_TOKENS DECODE_STEPS\n");
    return 2;
  }
  const int prompt_tokens = std::atoi(argv[2]);
  const int decode_steps = std::atoi(argv[3]);
  if (prompt_tokens < 1 || decode_steps < 0) {
    std::fprintf(stderr, "llama_steps: PROMPT_TOKENS must be >= 1 and DECODE_STEPS >= 0\n");
    return 2;
  }
  llama_log_set([](ggml_log_level level, const char* text, void*) {
    if (level == GGML_LOG_LEVEL_ERROR) std::fputs(text, stderr);
  }, nullptr);
  llama_backend_init();
  llama_model* model = llama_model_load_from_file(argv[1], llama_model_default_params());
  if (model == nullptr) {
    std::fprintf(stderr, "llama_steps: cannot load %s\n", argv[1]);
    return 1;
  }
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = prompt_tokens + decode_steps + 16;
  cp.n_batch = cp.n_ubatch = prompt_tokens;
  // One thread: under qemu a second one would count its spin-waits as work.
  cp.n_threads = cp.n_threads_batch = 1;
  cp.no_perf = true;
  llama_context* ctx = llama_init_from_model(model, cp);
  if (ctx == nullptr) {
    std::fprintf(stderr, "llama_steps: cannot create a context\n");
    return 1;
  }
  const llama_vocab* vocab = llama_model_get_vocab(model);
  std::string text;
  for (int i = 0; i + 1 < prompt_tokens; ++i) text += std::string(text.empty() ? "" : " ") + char('a' + i % 26);
  std::vector<llama_token> tokens(prompt_tokens + 8);
  const int n = llama_tokenize(vocab, text.c_str(), static_cast<int32_t>(text.size()), tokens.data(),
                               static_cast<int32_t>(tokens.size()), /*add_special=*/true, /*parse_special=*/false);
  if (n != prompt_tokens) {
    std::fprintf(stderr, "llama_steps: the prompt is %d tokens, expected %d (not make_bench_gguf.py's vocabulary?)\n",
                 n, prompt_tokens);
    return 1;
  }
  if (llama_decode(ctx, llama_batch_get_one(tokens.data(), n)) != 0) {
    std::fprintf(stderr, "llama_steps: prompt decode failed\n");
    return 1;
  }
  const int n_vocab = llama_vocab_n_tokens(vocab);
  llama_token token = 0;
  for (int step = 0; step < decode_steps; ++step) {
    const float* logits = llama_get_logits_ith(ctx, -1);
    token = 0;
    for (int v = 1; v < n_vocab; ++v) {
      if (logits[v] > logits[token]) token = v;
    }
    if (llama_decode(ctx, llama_batch_get_one(&token, 1)) != 0) {
      std::fprintf(stderr, "llama_steps: decode step %d failed\n", step);
      return 1;
    }
  }
  std::printf("prompt %d tokens, %d decode steps, last token %d\n", n, decode_steps, token);
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
