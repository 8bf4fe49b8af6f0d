/* The C API on a compiled CNN (capi/testdata): outputs against `tessel run` (same runtime, 1e-6) and
 * PyTorch (1e-4), through caller buffers, runtime buffers, an image in memory, two sessions on two
 * threads, the profile, and every error path of binding and running.
 *
 * usage: cnn_c_test MODEL.tsl INPUT.npy TORCH_OUTPUT.npy CLI_OUTPUT.npy */
#include <pthread.h>

#include "capi/c_test_util.h"

enum { kOutputs = 10, kRunsPerThread = 20 };

static const float* g_input;
static size_t g_input_bytes;
static const float* g_cli;

typedef struct {
  const tessel_model* model;
  int mismatches;
  tessel_status status;
} ThreadArgs;

static void* RunInThread(void* p) {
  ThreadArgs* a = (ThreadArgs*)p;
  tessel_session* s = NULL;
  float out[kOutputs];
  int64_t shape[4] = {1, 3, 16, 16};
  a->status = tessel_session_create(a->model, NULL, &s);
  if (a->status != TESSEL_OK) return NULL;
  a->status = tessel_session_bind_input(s, 0, g_input, g_input_bytes, TESSEL_DTYPE_F32, shape, 4);
  if (a->status == TESSEL_OK) a->status = tessel_session_bind_output(s, 0, out, sizeof(out));
  for (int i = 0; i < kRunsPerThread && a->status == TESSEL_OK; ++i) {
    memset(out, 0, sizeof(out));
    a->status = tessel_session_run(s);
    if (MaxAbsDiff(out, g_cli, kOutputs) > 1e-6f) ++a->mismatches;
  }
  tessel_session_free(s);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s MODEL.tsl INPUT.npy TORCH_OUTPUT.npy CLI_OUTPUT.npy\n", argv[0]);
    return 2;
  }
  void *in_block, *torch_block, *cli_block;
  size_t torch_bytes, cli_bytes;
  g_input = (const float*)ReadNpy(argv[2], &g_input_bytes, &in_block);
  const float* torch = (const float*)ReadNpy(argv[3], &torch_bytes, &torch_block);
  g_cli = (const float*)ReadNpy(argv[4], &cli_bytes, &cli_block);
  CHECK(g_input_bytes == 3 * 16 * 16 * sizeof(float));
  CHECK(torch_bytes == kOutputs * sizeof(float) && cli_bytes == kOutputs * sizeof(float));

  /* Version: header and library agree. */
  CHECK(tessel_version() == TESSEL_VERSION_NUMBER);

  tessel_model* model = NULL;
  CHECK_OK(tessel_model_load(argv[1], &model));
  if (model == NULL) return 1;

  /* Inputs and outputs as compiled. */
  int32_t n = -1;
  CHECK_OK(tessel_model_num_inputs(model, &n));
  CHECK(n == 1);
  CHECK_OK(tessel_model_num_outputs(model, &n));
  CHECK(n == 1);
  tessel_tensor_info info;
  CHECK_OK(tessel_model_input_info(model, 0, &info));
  CHECK(strcmp(info.name, "input") == 0);
  CHECK(info.dtype == TESSEL_DTYPE_F32 && info.rank == 4);
  CHECK(info.shape[0] == 1 && info.shape[1] == 3 && info.shape[2] == 16 && info.shape[3] == 16);
  CHECK(info.bytes == g_input_bytes);
  CHECK_OK(tessel_model_output_info(model, 0, &info));
  CHECK(strcmp(info.name, "logits") == 0);
  CHECK(info.dtype == TESSEL_DTYPE_F32 && info.rank == 2 && info.shape[0] == 1 && info.shape[1] == kOutputs);
  CHECK(info.bytes == kOutputs * sizeof(float));
  int32_t index = -1;
  CHECK_OK(tessel_model_find_input(model, "input", &index));
  CHECK(index == 0);
  CHECK_OK(tessel_model_find_output(model, "logits", &index));
  CHECK(index == 0);
  CHECK_FAILS(tessel_model_find_input(model, "image", &index), TESSEL_NOT_FOUND, "inputs: input");

  /* Caller buffers in and out. */
  tessel_session_options options;
  tessel_session_options_init(&options);
  CHECK(options.num_threads == 1);
  tessel_session* session = NULL;
  CHECK_OK(tessel_session_create(model, &options, &session));
  int64_t shape[4] = {1, 3, 16, 16};
  float out[kOutputs];
  memset(out, 0, sizeof(out));
  CHECK_FAILS(tessel_session_run(session), TESSEL_FAILED_PRECONDITION, "input 'input' has no data");
  CHECK(strstr(tessel_session_last_error(session), "has no data") != NULL);
  CHECK_OK(tessel_session_bind_input(session, 0, g_input, g_input_bytes, TESSEL_DTYPE_F32, shape, 4));
  CHECK_OK(tessel_session_bind_output(session, 0, out, sizeof(out)));
  CHECK_OK(tessel_session_run(session));
  const float cli_diff = MaxAbsDiff(out, g_cli, kOutputs);
  const float torch_diff = MaxAbsDiff(out, torch, kOutputs);
  printf("caller buffers: max |C API - tessel run| = %g, max |C API - PyTorch| = %g\n", cli_diff, torch_diff);
  CHECK(cli_diff <= 1e-6f);
  CHECK(torch_diff <= 1e-4f);

  /* Worker waits: an unknown value is refused; every wait gives the same logits on two threads. */
  tessel_session_options bad_wait = options;
  bad_wait.spin_workers = 7;
  tessel_session* refused = NULL;
  CHECK_FAILS(tessel_session_create(model, &bad_wait, &refused), TESSEL_INVALID_ARGUMENT, "spin_workers is 7");
  CHECK(refused == NULL);
  for (int wait = TESSEL_WORKERS_ADAPTIVE; wait <= TESSEL_WORKERS_SLEEP; ++wait) {
    tessel_session_options two = options;
    two.num_threads = 2;
    two.spin_workers = wait;
    tessel_session* s2 = NULL;
    CHECK_OK(tessel_session_create(model, &two, &s2));
    float out2[kOutputs];
    CHECK_OK(tessel_session_bind_input(s2, 0, g_input, g_input_bytes, TESSEL_DTYPE_F32, shape, 4));
    CHECK_OK(tessel_session_bind_output(s2, 0, out2, sizeof(out2)));
    for (int run = 0; run < 3; ++run) {
      memset(out2, 0, sizeof(out2));
      CHECK_OK(tessel_session_run(s2));
      CHECK(MaxAbsDiff(out2, out, kOutputs) <= 1e-5f);
    }
    CHECK_OK(tessel_session_free(s2));
  }
  const void* arena_out = NULL;
  size_t out_bytes = 0;
  CHECK_OK(tessel_session_output_buffer(session, 0, &arena_out, &out_bytes));
  CHECK(out_bytes == sizeof(out) && memcmp(arena_out, out, sizeof(out)) == 0);

  /* Per-op profile: one entry per op with a name, a kernel and a time. */
  CHECK_OK(tessel_session_set_profiling(session, 1));
  CHECK_OK(tessel_session_run(session));
  int32_t ops = 0;
  CHECK_OK(tessel_session_num_profile_entries(session, &ops));
  CHECK(ops >= 3);
  for (int32_t i = 0; i < ops; ++i) {
    tessel_op_profile p;
    CHECK_OK(tessel_session_profile_entry(session, i, &p));
    CHECK(p.name != NULL && p.name[0] != '\0' && p.kernel != NULL && p.kernel[0] != '\0');
    CHECK(p.milliseconds >= 0 && p.bytes > 0);
  }
  CHECK_FAILS(tessel_session_profile_entry(session, ops, &(tessel_op_profile){0}), TESSEL_OUT_OF_RANGE,
              "out of range");

  /* Runtime-owned input buffer: no copy in. */
  tessel_session* session2 = NULL;
  CHECK_OK(tessel_session_create(model, NULL, &session2));
  void* slot = NULL;
  size_t slot_bytes = 0;
  CHECK_OK(tessel_session_input_buffer(session2, 0, &slot, &slot_bytes));
  CHECK(slot != NULL && slot_bytes == g_input_bytes);
  if (slot != NULL) memcpy(slot, g_input, g_input_bytes);
  CHECK_OK(tessel_session_run(session2));
  CHECK_OK(tessel_session_output_buffer(session2, 0, &arena_out, &out_bytes));
  CHECK(MaxAbsDiff((const float*)arena_out, g_cli, kOutputs) <= 1e-6f);

  /* Wrong dtype, shape, rank, size, index, null data: errors naming the input, the session unharmed. */
  CHECK_FAILS(tessel_session_bind_input(session, 0, g_input, g_input_bytes, TESSEL_DTYPE_I32, shape, 4),
              TESSEL_INVALID_ARGUMENT, "input 'input' has dtype f32, got i32");
  int64_t wrong_shape[4] = {1, 3, 16, 17};
  CHECK_FAILS(tessel_session_bind_input(session, 0, g_input, g_input_bytes, TESSEL_DTYPE_F32, wrong_shape, 4),
              TESSEL_INVALID_ARGUMENT, "has shape [1,3,16,16], got [1,3,16,17]");
  CHECK_FAILS(tessel_session_bind_input(session, 0, g_input, g_input_bytes, TESSEL_DTYPE_F32, shape, 3),
              TESSEL_INVALID_ARGUMENT, "got [1,3,16]");
  CHECK_FAILS(tessel_session_bind_input(session, 0, g_input, g_input_bytes - 4, TESSEL_DTYPE_F32, shape, 4),
              TESSEL_INVALID_ARGUMENT, "takes 3072 bytes, got a buffer of 3068");
  CHECK_FAILS(tessel_session_bind_input(session, 1, g_input, g_input_bytes, TESSEL_DTYPE_F32, shape, 4),
              TESSEL_OUT_OF_RANGE, "input index 1");
  CHECK_FAILS(tessel_session_bind_input(session, 0, NULL, g_input_bytes, TESSEL_DTYPE_F32, shape, 4),
              TESSEL_INVALID_ARGUMENT, "data is null");
  CHECK_FAILS(tessel_session_bind_input(session, 0, g_input, g_input_bytes, TESSEL_DTYPE_F32, NULL, 4),
              TESSEL_INVALID_ARGUMENT, "shape is null");
  CHECK_FAILS(tessel_session_bind_output(session, 0, out, sizeof(out) + 4), TESSEL_INVALID_ARGUMENT,
              "output 'logits' is 40 bytes");
  CHECK(strstr(tessel_session_last_error(session), "output 'logits'") != NULL);
  CHECK_FAILS(tessel_model_input_info(model, -1, &info), TESSEL_OUT_OF_RANGE, "input index -1");
  memset(out, 0, sizeof(out));
  CHECK_OK(tessel_session_run(session));
  CHECK(MaxAbsDiff(out, g_cli, kOutputs) <= 1e-6f);

  /* Wrong-kind handles: a model where a session belongs, and the reverse. */
  CHECK_FAILS(tessel_session_run((tessel_session*)model), TESSEL_INVALID_ARGUMENT,
              "is a tessel_model, not a tessel_session");
  CHECK_FAILS(tessel_model_num_inputs((const tessel_model*)session, &n), TESSEL_INVALID_ARGUMENT,
              "is a tessel_session, not a tessel_model");

  /* The artifact from caller memory (64-byte aligned), used in place. */
  size_t image_bytes = 0;
  char* file = ReadFile(argv[1], &image_bytes);
  CHECK(file != NULL);
  void* image = NULL;
  CHECK(posix_memalign(&image, 64, image_bytes) == 0);
  memcpy(image, file, image_bytes);
  tessel_model* from_memory = NULL;
  CHECK_OK(tessel_model_load_from_memory(image, image_bytes, &from_memory));
  tessel_session* session3 = NULL;
  CHECK_OK(tessel_session_create(from_memory, NULL, &session3));
  CHECK_OK(tessel_session_bind_input(session3, 0, g_input, g_input_bytes, TESSEL_DTYPE_F32, shape, 4));
  CHECK_OK(tessel_session_run(session3));
  CHECK_OK(tessel_session_output_buffer(session3, 0, &arena_out, &out_bytes));
  CHECK(MaxAbsDiff((const float*)arena_out, g_cli, kOutputs) <= 1e-6f);
  /* The session keeps the model alive after tessel_model_free. */
  CHECK_OK(tessel_model_free(from_memory));
  CHECK_OK(tessel_session_run(session3));
  CHECK_FAILS(tessel_model_num_inputs(from_memory, &n), TESSEL_INVALID_ARGUMENT, "not a live tessel_model");
  CHECK_OK(tessel_session_free(session3));
  /* A corrupted or truncated image is refused. */
  tessel_model* bad = NULL;
  CHECK(tessel_model_load_from_memory(image, 100, &bad) != TESSEL_OK && bad == NULL);
  CHECK(tessel_last_error()[0] != '\0');
  ((char*)image)[image_bytes - 1] ^= 0x55;
  CHECK(tessel_model_load_from_memory(image, image_bytes, &bad) != TESSEL_OK && bad == NULL);
  free(image);
  free(file);

  /* Two sessions on one model, on two threads at once. */
  pthread_t threads[2];
  ThreadArgs args[2] = {{model, 0, TESSEL_OK}, {model, 0, TESSEL_OK}};
  for (int t = 0; t < 2; ++t) pthread_create(&threads[t], NULL, RunInThread, &args[t]);
  for (int t = 0; t < 2; ++t) {
    pthread_join(threads[t], NULL);
    CHECK(args[t].status == TESSEL_OK);
    CHECK(args[t].mismatches == 0);
  }

  CHECK_OK(tessel_session_free(session2));
  CHECK_OK(tessel_session_free(session));
  CHECK_FAILS(tessel_session_run(session), TESSEL_INVALID_ARGUMENT, "not a live tessel_session");
  CHECK_OK(tessel_model_free(model));
  free(in_block);
  free(torch_block);
  free(cli_block);
  if (g_failures) {
    fprintf(stderr, "%d check(s) failed\n", g_failures);
    return 1;
  }
  printf("PASS\n");
  return 0;
}
