/* Tessel's stable C API: compiled CNN artifacts (.tsl) and Llama-family language models (GGUF or
 * safetensors) behind opaque handles. Plain C99; no C++ type or exception crosses it.
 *
 * Every function that can fail returns a tessel_status. On failure, tessel_last_error() holds a
 * message for the calling thread (what was wrong and where) until that thread's next failing call;
 * a session also keeps the message of its own last failure (tessel_session_last_error). A null,
 * freed or wrong-kind handle, a null pointer, a wrong shape, dtype or size is an error code, never
 * an abort.
 *
 * Threads: a model may be shared by any number of sessions, each used by one thread at a time.
 * An LLM (tessel_llm) serializes its calls internally: its sequences may be used from several
 * threads, one forward pass at a time. */
#ifndef TESSEL_TESSEL_H_
#define TESSEL_TESSEL_H_

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define TESSEL_API
#else
#define TESSEL_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header. A change of a public struct's layout or of a function's signature
 * bumps MAJOR (or MINOR while MAJOR is 0); capi/abi_c_test.c records each version's layouts. */
#define TESSEL_VERSION_MAJOR 0
#define TESSEL_VERSION_MINOR 1
#define TESSEL_VERSION_PATCH 0
#define TESSEL_VERSION_NUMBER (TESSEL_VERSION_MAJOR * 10000 + TESSEL_VERSION_MINOR * 100 + TESSEL_VERSION_PATCH)

/* The library's version as MAJOR * 10000 + MINOR * 100 + PATCH: compare with TESSEL_VERSION_NUMBER
 * to detect a header / library mismatch. */
TESSEL_API int32_t tessel_version(void);
/* "MAJOR.MINOR.PATCH" (static storage). */
TESSEL_API const char* tessel_version_string(void);

typedef enum tessel_status {
  TESSEL_OK = 0,
  TESSEL_INVALID_ARGUMENT = 1,   /* null pointer, bad handle, wrong shape / dtype / size, bad option */
  TESSEL_NOT_FOUND = 2,          /* no such file, input or output name */
  TESSEL_OUT_OF_RANGE = 3,       /* index out of range, buffer too small, context full */
  TESSEL_FAILED_PRECONDITION = 4,/* e.g. run before every input is bound */
  TESSEL_RESOURCE_EXHAUSTED = 5, /* out of memory, no free sequence slot */
  TESSEL_UNIMPLEMENTED = 6,      /* e.g. an artifact built for another CPU family */
  TESSEL_DATA_LOSS = 7,          /* corrupt file (checksum, truncated) */
  TESSEL_INTERNAL = 8,           /* a bug: please report with tessel_last_error() */
  TESSEL_CANCELLED = 9           /* a callback asked to stop */
} tessel_status;

/* A short constant name for a status ("TESSEL_OK", ...). */
TESSEL_API const char* tessel_status_name(tessel_status status);
/* The calling thread's last error message ("" if none). Valid until the thread's next failing call. */
TESSEL_API const char* tessel_last_error(void);

typedef enum tessel_dtype {
  TESSEL_DTYPE_F32 = 0,
  TESSEL_DTYPE_F16 = 1,
  TESSEL_DTYPE_BF16 = 2,
  TESSEL_DTYPE_I8 = 3,
  TESSEL_DTYPE_U8 = 4,
  TESSEL_DTYPE_I32 = 5,
  TESSEL_DTYPE_I64 = 6,
  TESSEL_DTYPE_BOOL = 7,
  TESSEL_DTYPE_F64 = 8
} tessel_dtype;

/* "f32", "i8", ... (static storage; "?" for an unknown value). */
TESSEL_API const char* tessel_dtype_name(tessel_dtype dtype);

/* ----------------------------------------------------------------------------------------------
 * Compiled CNN / graph artifacts (.tsl, written by `tessel compile`).
 * -------------------------------------------------------------------------------------------- */

typedef struct tessel_model tessel_model;
typedef struct tessel_session tessel_session;

#define TESSEL_MAX_RANK 8

typedef struct tessel_tensor_info {
  const char* name; /* owned by the model */
  int32_t dtype;    /* a tessel_dtype */
  int32_t rank;
  int64_t shape[TESSEL_MAX_RANK];
  uint64_t bytes; /* storage size of the whole tensor */
} tessel_tensor_info;

/* Loads an artifact file (mapped; weights used in place). */
TESSEL_API tessel_status tessel_model_load(const char* path, tessel_model** out);
/* Loads an artifact image in caller memory, used in place: `data` must stay valid and unchanged until
 * tessel_model_free and should be 64-byte aligned (the weights section is read with aligned loads). */
TESSEL_API tessel_status tessel_model_load_from_memory(const void* data, size_t size, tessel_model** out);
/* Frees the model; sessions created from it keep what they need and stay usable. Null is a no-op. */
TESSEL_API tessel_status tessel_model_free(tessel_model* model);

TESSEL_API tessel_status tessel_model_num_inputs(const tessel_model* model, int32_t* out);
TESSEL_API tessel_status tessel_model_num_outputs(const tessel_model* model, int32_t* out);
TESSEL_API tessel_status tessel_model_input_info(const tessel_model* model, int32_t index, tessel_tensor_info* out);
TESSEL_API tessel_status tessel_model_output_info(const tessel_model* model, int32_t index, tessel_tensor_info* out);
/* Index of the input / output called `name` (TESSEL_NOT_FOUND otherwise). */
TESSEL_API tessel_status tessel_model_find_input(const tessel_model* model, const char* name, int32_t* index);
TESSEL_API tessel_status tessel_model_find_output(const tessel_model* model, const char* name, int32_t* index);

enum { TESSEL_WORKERS_ADAPTIVE = 0, TESSEL_WORKERS_SPIN = 1, TESSEL_WORKERS_SLEEP = 2 };

typedef struct tessel_session_options {
  int32_t num_threads;     /* threads per run, the caller's included (default 1) */
  int32_t spin_workers;    /* how pool workers wait between ops: TESSEL_WORKERS_ADAPTIVE (0, default: spin
                              within a run, sleep after it and, while other processes contend for the cores,
                              after every op), TESSEL_WORKERS_SPIN (1: always, idle dedicated cores only) or
                              TESSEL_WORKERS_SLEEP (2: after every op) */
  int32_t force_reference; /* nonzero: every op on its reference kernel */
} tessel_session_options;

TESSEL_API void tessel_session_options_init(tessel_session_options* options);

/* A session owns its planned arena; create one per thread. `options` may be null (defaults). */
TESSEL_API tessel_status tessel_session_create(const tessel_model* model, const tessel_session_options* options,
                                               tessel_session** out);
TESSEL_API tessel_status tessel_session_free(tessel_session* session);
/* The message of this session's last failure ("" if none). */
TESSEL_API const char* tessel_session_last_error(const tessel_session* session);

/* Binds a caller buffer to input `index`: read (copied into the arena) by every run until rebound.
 * dtype, rank and shape must equal the compiled input's, and `bytes` its size. */
TESSEL_API tessel_status tessel_session_bind_input(tessel_session* session, int32_t index, const void* data,
                                                   size_t bytes, tessel_dtype dtype, const int64_t* shape,
                                                   int32_t rank);
/* The runtime-owned buffer of input `index` (in the arena; no copy). Runs reuse arena memory, so fill
 * it before every run. Asking for it unbinds a caller buffer bound to that input. */
TESSEL_API tessel_status tessel_session_input_buffer(tessel_session* session, int32_t index, void** data,
                                                     size_t* bytes);
/* Binds a caller buffer that every run copies output `index` into (`bytes` must equal its size). */
TESSEL_API tessel_status tessel_session_bind_output(tessel_session* session, int32_t index, void* data, size_t bytes);
/* The runtime-owned output (in the arena), valid until the next run. */
TESSEL_API tessel_status tessel_session_output_buffer(const tessel_session* session, int32_t index,
                                                      const void** data, size_t* bytes);
/* Runs once. Every input must have been bound or its runtime buffer requested. No heap allocation. */
TESSEL_API tessel_status tessel_session_run(tessel_session* session);

/* Per-op profile of the runs after enabling it (the last run's timings). */
typedef struct tessel_op_profile {
  const char* name;   /* owned by the session, valid until it is freed */
  const char* kernel; /* likewise */
  double milliseconds;
  uint64_t bytes; /* bytes of the op's inputs and outputs */
} tessel_op_profile;

TESSEL_API tessel_status tessel_session_set_profiling(tessel_session* session, int32_t enabled);
TESSEL_API tessel_status tessel_session_num_profile_entries(const tessel_session* session, int32_t* out);
TESSEL_API tessel_status tessel_session_profile_entry(const tessel_session* session, int32_t index,
                                                      tessel_op_profile* out);

/* ----------------------------------------------------------------------------------------------
 * Language models (Llama family): a GGUF file or a Hugging Face directory (config.json,
 * *.safetensors, tokenizer.json).
 * -------------------------------------------------------------------------------------------- */

typedef struct tessel_llm tessel_llm;
typedef struct tessel_sequence tessel_sequence;

typedef struct tessel_llm_options {
  int32_t threads;       /* worker threads (default 1) */
  int32_t max_context;   /* tokens per sequence; 0: the model's context length */
  int32_t max_sequences; /* sequences alive at once (default 1) */
  int32_t max_batch;     /* tokens per forward pass; longer prefills run in chunks (default 64) */
  int32_t kv_f32;        /* nonzero: f32 KV cache (default f16) */
  int32_t mmap;          /* nonzero: map the weights as they are (less memory, slower decode) */
} tessel_llm_options;

TESSEL_API void tessel_llm_options_init(tessel_llm_options* options);

typedef struct tessel_sampler_config {
  float temperature;    /* <= 0: greedy (default 0.8) */
  int32_t top_k;        /* <= 0: off (default 40) */
  float top_p;          /* >= 1: off (default 0.95) */
  float min_p;          /* <= 0: off (default 0.05) */
  float repeat_penalty; /* 1: off (default 1) */
  int32_t repeat_last_n;/* default 64 */
  uint64_t seed;        /* default 0 */
} tessel_sampler_config;

TESSEL_API void tessel_sampler_config_init(tessel_sampler_config* config);

/* `options` may be null (defaults). */
TESSEL_API tessel_status tessel_llm_load(const char* path, const tessel_llm_options* options, tessel_llm** out);
/* Fails (TESSEL_FAILED_PRECONDITION) while sequences of the model are alive. */
TESSEL_API tessel_status tessel_llm_free(tessel_llm* llm);
TESSEL_API tessel_status tessel_llm_vocab_size(const tessel_llm* llm, int32_t* out);
TESSEL_API tessel_status tessel_llm_context_length(const tessel_llm* llm, int32_t* out);
/* BOS / EOS token ids (-1 when the vocabulary has none). */
TESSEL_API tessel_status tessel_llm_special_tokens(const tessel_llm* llm, int32_t* bos, int32_t* eos);

/* Token ids of `text` (`length` bytes), with BOS when add_special is nonzero and the vocabulary wants
 * it. Writes at most `capacity` ids; *count receives the full count, and a larger count than
 * `capacity` returns TESSEL_OUT_OF_RANGE (call again with a larger buffer). */
TESSEL_API tessel_status tessel_llm_tokenize(const tessel_llm* llm, const char* text, size_t length,
                                             int32_t add_special, int32_t* tokens, int32_t capacity,
                                             int32_t* count);
/* The text of `tokens`, NUL-terminated in `text` when it fits `capacity` bytes (NUL included);
 * *length receives the byte count without the NUL (TESSEL_OUT_OF_RANGE when it does not fit). */
TESSEL_API tessel_status tessel_llm_detokenize(const tessel_llm* llm, const int32_t* tokens, int32_t count,
                                               char* text, size_t capacity, size_t* length);

/* The bytes one token contributes to streamed text (a leading space kept; possibly part of a UTF-8
 * character), NUL-terminated when it fits; otherwise as tessel_llm_detokenize. */
TESSEL_API tessel_status tessel_llm_token_piece(const tessel_llm* llm, int32_t token, char* text, size_t capacity,
                                                size_t* length);

/* A sequence: its own KV cache slot, token history and logits. */
TESSEL_API tessel_status tessel_sequence_create(tessel_llm* llm, tessel_sequence** out);
TESSEL_API tessel_status tessel_sequence_free(tessel_sequence* sequence);
/* Appends `tokens` and runs them; the logits of the last one become the sequence's logits. */
TESSEL_API tessel_status tessel_sequence_prefill(tessel_sequence* sequence, const int32_t* tokens, int32_t count);
/* Samples the next token from the sequence's logits with `config` (null: defaults), appends it and
 * runs it. *token receives it. A sampler is created when the config changes and reused otherwise. */
TESSEL_API tessel_status tessel_sequence_decode(tessel_sequence* sequence, const tessel_sampler_config* config,
                                                int32_t* token);
/* The logits after the last prefill / decode ([vocab] floats owned by the sequence, valid until its
 * next call); *vocab receives their count. TESSEL_FAILED_PRECONDITION before any token ran. */
TESSEL_API tessel_status tessel_sequence_logits(const tessel_sequence* sequence, const float** logits,
                                                int32_t* vocab);
/* Tokens in the sequence so far. */
TESSEL_API tessel_status tessel_sequence_length(const tessel_sequence* sequence, int32_t* out);

/* Receives each generated token and its text (not NUL-terminated; may be part of a UTF-8 character).
 * Return nonzero to stop. It runs while the model is busy: it must not call tessel_sequence_* or
 * tessel_llm_generate on the same model. */
typedef int32_t (*tessel_token_callback)(int32_t token, const char* piece, size_t length, void* user_data);

/* Encodes `prompt` (BOS added as the vocabulary asks), prefills it in a new sequence, then samples up
 * to `max_tokens` tokens, calling `callback` for each. Stops at end-of-text, a full context or a
 * nonzero callback return (then TESSEL_OK still; *generated tells how many). `generated` may be null. */
TESSEL_API tessel_status tessel_llm_generate(tessel_llm* llm, const char* prompt, int32_t max_tokens,
                                             const tessel_sampler_config* config, tessel_token_callback callback,
                                             void* user_data, int32_t* generated);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* TESSEL_TESSEL_H_ */
