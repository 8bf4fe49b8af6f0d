/* The C API on the trained tiny Llama (llm/testdata:tiny_llama) against PyTorch's references:
 * tokenization of the prompt (exact), the prompt's last logits (1e-3, as llm/model's reference test),
 * 64 greedy decode steps (PyTorch's tokens, exact), streaming generation (PyTorch's text, exact), the
 * safetensors folder's tokens and logits (exact, 1e-3), plus
 * seeded sampling, context and sequence limits and misuse.
 *
 * usage: llm_c_test TINY_LLAMA_DIR */
#include "capi/c_test_util.h"

enum { kPrompt = 64, kGreedy = 64, kVocab = 512 };

typedef struct {
  char text[4096];
  size_t length;
  int32_t calls;
  int32_t stop_after; /* 0: never */
} Collected;

static int32_t Collect(int32_t token, const char* piece, size_t length, void* user) {
  Collected* c = (Collected*)user;
  (void)token;
  if (c->length + length < sizeof(c->text)) {
    memcpy(c->text + c->length, piece, length);
    c->length += length;
    c->text[c->length] = '\0';
  }
  ++c->calls;
  return c->stop_after > 0 && c->calls >= c->stop_after;
}

static char g_path[4096];
static const char* Path(const char* dir, const char* file) {
  snprintf(g_path, sizeof(g_path), "%s/%s", dir, file);
  return g_path;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s TINY_LLAMA_DIR\n", argv[0]);
    return 2;
  }
  const char* dir = argv[1];
  void *b1, *b2, *b3;
  size_t bytes;
  const int32_t* ref_prompt = (const int32_t*)ReadNpy(Path(dir, "prompt_tokens.npy"), &bytes, &b1);
  CHECK(bytes == kPrompt * sizeof(int32_t));
  const int32_t* ref_greedy = (const int32_t*)ReadNpy(Path(dir, "greedy_tokens.npy"), &bytes, &b2);
  CHECK(bytes == kGreedy * sizeof(int32_t));
  const float* ref_logits = (const float*)ReadNpy(Path(dir, "ref_logits.npy"), &bytes, &b3);
  CHECK(bytes == (size_t)kPrompt * kVocab * sizeof(float));
  size_t prompt_length = 0, greedy_length = 0;
  char* prompt = ReadFile(Path(dir, "prompt.txt"), &prompt_length);
  char* greedy_text = ReadFile(Path(dir, "greedy_text.txt"), &greedy_length);
  CHECK(prompt != NULL && greedy_text != NULL);

  tessel_llm_options options;
  tessel_llm_options_init(&options);
  options.kv_f32 = 1;
  options.max_sequences = 2;
  tessel_llm* llm = NULL;
  CHECK_OK(tessel_llm_load(Path(dir, "model-f32.gguf"), &options, &llm));
  if (llm == NULL) return 1;
  int32_t vocab = 0, context = 0, bos = -2, eos = -2;
  CHECK_OK(tessel_llm_vocab_size(llm, &vocab));
  CHECK(vocab == kVocab);
  CHECK_OK(tessel_llm_context_length(llm, &context));
  CHECK(context >= kPrompt + kGreedy);
  CHECK_OK(tessel_llm_special_tokens(llm, &bos, &eos));
  CHECK(bos == ref_prompt[0]);

  /* Tokenize: PyTorch's prompt tokens; a short buffer says how many it needs. */
  int32_t tokens[256];
  int32_t count = 0;
  CHECK_FAILS(tessel_llm_tokenize(llm, prompt, prompt_length, 1, tokens, 8, &count), TESSEL_OUT_OF_RANGE,
              "the buffer holds 8");
  CHECK(count == kPrompt);
  CHECK_OK(tessel_llm_tokenize(llm, prompt, prompt_length, 1, tokens, 256, &count));
  CHECK(count == kPrompt && memcmp(tokens, ref_prompt, sizeof(int32_t) * kPrompt) == 0);

  /* Detokenize: the prompt's text back (BOS vanishes); a short buffer is refused. */
  char text[4096];
  size_t length = 0;
  CHECK_OK(tessel_llm_detokenize(llm, tokens, count, text, sizeof(text), &length));
  CHECK(length == prompt_length && strcmp(text, prompt) == 0);
  CHECK_FAILS(tessel_llm_detokenize(llm, tokens, count, text, 4, &length), TESSEL_OUT_OF_RANGE, "the buffer holds 4");
  int32_t bad_token = kVocab;
  CHECK_FAILS(tessel_llm_detokenize(llm, &bad_token, 1, text, sizeof(text), &length), TESSEL_INVALID_ARGUMENT,
              "outside the vocabulary of 512");

  /* Token pieces: streamed, they spell the prompt with the SentencePiece prefix space. */
  char pieces[4096] = "";
  size_t pieces_length = 0;
  for (int32_t i = 0; i < count; ++i) {
    char piece[64];
    size_t piece_length = 0;
    CHECK_OK(tessel_llm_token_piece(llm, tokens[i], piece, sizeof(piece), &piece_length));
    CHECK(strlen(piece) == piece_length);
    if (pieces_length + piece_length < sizeof(pieces)) {
      memcpy(pieces + pieces_length, piece, piece_length + 1);
      pieces_length += piece_length;
    }
  }
  CHECK(strcmp(pieces[0] == ' ' ? pieces + 1 : pieces, prompt) == 0);
  CHECK_FAILS(tessel_llm_token_piece(llm, -1, text, sizeof(text), &length), TESSEL_INVALID_ARGUMENT,
              "token id -1 is outside");

  /* Prefill: the last position's logits match PyTorch's. */
  tessel_sequence* seq = NULL;
  CHECK_OK(tessel_sequence_create(llm, &seq));
  const float* logits = NULL;
  int32_t logits_count = 0;
  CHECK_FAILS(tessel_sequence_logits(seq, &logits, &logits_count), TESSEL_FAILED_PRECONDITION, "prefill");
  int32_t next = -1;
  CHECK_FAILS(tessel_sequence_decode(seq, NULL, &next), TESSEL_FAILED_PRECONDITION, "prefill");
  CHECK_FAILS(tessel_sequence_prefill(seq, &bad_token, 1), TESSEL_INVALID_ARGUMENT, "outside the vocabulary");
  CHECK_OK(tessel_sequence_prefill(seq, tokens, count));
  CHECK_OK(tessel_sequence_logits(seq, &logits, &logits_count));
  CHECK(logits_count == kVocab);
  const float prefill_diff = MaxAbsDiff(logits, ref_logits + (size_t)(kPrompt - 1) * kVocab, kVocab);
  printf("prefill: max |C API - PyTorch| over the last position's logits = %g\n", prefill_diff);
  CHECK(prefill_diff <= 1e-3f);

  /* Greedy decode: PyTorch's 64 tokens. */
  tessel_sampler_config greedy;
  tessel_sampler_config_init(&greedy);
  greedy.temperature = 0;
  int32_t decoded[kGreedy];
  for (int i = 0; i < kGreedy; ++i) CHECK_OK(tessel_sequence_decode(seq, &greedy, &decoded[i]));
  int same = 0;
  for (int i = 0; i < kGreedy; ++i) same += decoded[i] == ref_greedy[i];
  printf("greedy decode: %d of %d tokens equal PyTorch's\n", same, kGreedy);
  CHECK(same == kGreedy);
  int32_t seq_length = 0;
  CHECK_OK(tessel_sequence_length(seq, &seq_length));
  CHECK(seq_length == kPrompt + kGreedy);

  /* A second sequence while the first lives; a third exceeds max_sequences. */
  tessel_sequence* a = NULL;
  tessel_sequence* b = NULL;
  CHECK_OK(tessel_sequence_create(llm, &a));
  CHECK_FAILS(tessel_sequence_create(llm, &b), TESSEL_RESOURCE_EXHAUSTED, "max_sequences");
  CHECK_FAILS(tessel_llm_free(llm), TESSEL_FAILED_PRECONDITION, "free them first");
  CHECK_OK(tessel_sequence_free(seq));
  CHECK_FAILS(tessel_sequence_length(seq, &seq_length), TESSEL_INVALID_ARGUMENT, "not a live tessel_sequence");

  /* Seeded sampling repeats itself across sequences. */
  tessel_sampler_config sampled;
  tessel_sampler_config_init(&sampled);
  sampled.seed = 7;
  int32_t first[16], second[16];
  CHECK_OK(tessel_sequence_create(llm, &b));
  CHECK_OK(tessel_sequence_prefill(a, tokens, count));
  CHECK_OK(tessel_sequence_prefill(b, tokens, count));
  for (int i = 0; i < 16; ++i) CHECK_OK(tessel_sequence_decode(a, &sampled, &first[i]));
  for (int i = 0; i < 16; ++i) CHECK_OK(tessel_sequence_decode(b, &sampled, &second[i]));
  CHECK(memcmp(first, second, sizeof(first)) == 0);
  tessel_sampler_config invalid = sampled;
  invalid.min_p = 2;
  CHECK_FAILS(tessel_sequence_decode(a, &invalid, &next), TESSEL_INVALID_ARGUMENT, "min-p must be in [0, 1]");

  /* The context's end: more tokens than it holds are refused, the sequence unchanged. */
  static int32_t many[1024];
  for (int i = 0; i < 1024; ++i) many[i] = tokens[1];
  CHECK_FAILS(tessel_sequence_prefill(a, many, context), TESSEL_OUT_OF_RANGE, "exceed its context");
  CHECK_OK(tessel_sequence_length(a, &seq_length));
  CHECK(seq_length == kPrompt + 16);
  CHECK_OK(tessel_sequence_free(a));
  CHECK_OK(tessel_sequence_free(b));

  /* Streaming generation: the pieces spell PyTorch's greedy continuation; a callback can stop it. */
  Collected collected;
  memset(&collected, 0, sizeof(collected));
  int32_t generated = 0;
  CHECK_OK(tessel_llm_generate(llm, prompt, kGreedy, &greedy, Collect, &collected, &generated));
  CHECK(generated == kGreedy && collected.calls == kGreedy);
  CHECK(collected.length == greedy_length && strcmp(collected.text, greedy_text) == 0);
  memset(&collected, 0, sizeof(collected));
  collected.stop_after = 5;
  CHECK_OK(tessel_llm_generate(llm, prompt, kGreedy, &greedy, Collect, &collected, &generated));
  CHECK(generated == 5 && collected.calls == 5);
  CHECK(strncmp(collected.text, greedy_text, collected.length) == 0);
  CHECK_FAILS(tessel_llm_generate(llm, prompt, 4, &greedy, NULL, NULL, NULL), TESSEL_INVALID_ARGUMENT,
              "callback is null");

  CHECK_OK(tessel_llm_free(llm));
  CHECK_FAILS(tessel_llm_vocab_size(llm, &vocab), TESSEL_INVALID_ARGUMENT, "not a live tessel_llm");

  /* The same model as a Hugging Face folder (safetensors + tokenizer.json): the same tokens and logits. */
  tessel_llm* hf = NULL;
  CHECK_OK(tessel_llm_load(Path(dir, "safetensors"), &options, &hf));
  if (hf != NULL) {
    CHECK_OK(tessel_llm_tokenize(hf, prompt, prompt_length, 1, tokens, 256, &count));
    CHECK(count == kPrompt && memcmp(tokens, ref_prompt, sizeof(int32_t) * kPrompt) == 0);
    CHECK_OK(tessel_sequence_create(hf, &seq));
    CHECK_OK(tessel_sequence_prefill(seq, tokens, count));
    CHECK_OK(tessel_sequence_logits(seq, &logits, &logits_count));
    const float hf_diff = MaxAbsDiff(logits, ref_logits + (size_t)(kPrompt - 1) * kVocab, kVocab);
    printf("safetensors prefill: max |C API - PyTorch| = %g\n", hf_diff);
    CHECK(hf_diff <= 1e-3f);
    CHECK_OK(tessel_sequence_free(seq));
    CHECK_OK(tessel_llm_free(hf));
  }
  free(prompt);
  free(greedy_text);
  free(b1);
  free(b2);
  free(b3);
  if (g_failures) {
    fprintf(stderr, "%d check(s) failed\n", g_failures);
    return 1;
  }
  printf("PASS\n");
  return 0;
}
