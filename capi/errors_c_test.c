/* The C API's answers to misuse that needs no model: null pointers, forged and wrong-kind handles,
 * missing or malformed files. Each must return its code and a message, never abort. Runs on every
 * target (qemu-aarch64 included). */
#include "capi/c_test_util.h"

int main(void) {
  /* Version: header and library agree, and the string matches the macros. */
  CHECK(tessel_version() == TESSEL_VERSION_NUMBER);
  char expected[32];
  snprintf(expected, sizeof(expected), "%d.%d.%d", TESSEL_VERSION_MAJOR, TESSEL_VERSION_MINOR, TESSEL_VERSION_PATCH);
  CHECK(strcmp(tessel_version_string(), expected) == 0);
  CHECK(strcmp(tessel_status_name(TESSEL_OK), "TESSEL_OK") == 0);
  CHECK(strcmp(tessel_status_name(TESSEL_DATA_LOSS), "TESSEL_DATA_LOSS") == 0);
  CHECK(strcmp(tessel_status_name((tessel_status)99), "TESSEL_UNKNOWN_STATUS") == 0);
  CHECK(strcmp(tessel_dtype_name(TESSEL_DTYPE_I8), "i8") == 0);
  CHECK(strcmp(tessel_dtype_name((tessel_dtype)42), "?") == 0);

  /* Null pointers. */
  tessel_model* model = (tessel_model*)1;
  CHECK_FAILS(tessel_model_load(NULL, &model), TESSEL_INVALID_ARGUMENT, "tessel_model_load: path is null");
  CHECK_FAILS(tessel_model_load("x.tsl", NULL), TESSEL_INVALID_ARGUMENT, "out is null");
  CHECK_FAILS(tessel_model_load_from_memory(NULL, 10, &model), TESSEL_INVALID_ARGUMENT, "data is null");
  int32_t n = 0;
  CHECK_FAILS(tessel_model_num_inputs(NULL, &n), TESSEL_INVALID_ARGUMENT, "model is null");
  CHECK_FAILS(tessel_session_create(NULL, NULL, NULL), TESSEL_INVALID_ARGUMENT, "model is null");
  CHECK_FAILS(tessel_session_run(NULL), TESSEL_INVALID_ARGUMENT, "session is null");
  CHECK_FAILS(tessel_session_bind_input(NULL, 0, NULL, 0, TESSEL_DTYPE_F32, NULL, 0), TESSEL_INVALID_ARGUMENT,
              "session is null");
  CHECK_FAILS(tessel_llm_load(NULL, NULL, NULL), TESSEL_INVALID_ARGUMENT, "path is null");
  CHECK_FAILS(tessel_llm_tokenize(NULL, "a", 1, 1, NULL, 0, &n), TESSEL_INVALID_ARGUMENT, "llm is null");
  CHECK_FAILS(tessel_sequence_prefill(NULL, NULL, 1), TESSEL_INVALID_ARGUMENT, "sequence is null");
  CHECK_FAILS(tessel_sequence_decode(NULL, NULL, &n), TESSEL_INVALID_ARGUMENT, "sequence is null");
  CHECK_FAILS(tessel_llm_generate(NULL, "x", 1, NULL, NULL, NULL, NULL), TESSEL_INVALID_ARGUMENT, "llm is null");
  /* Freeing null is a no-op, as free(NULL) is. */
  CHECK_OK(tessel_model_free(NULL));
  CHECK_OK(tessel_session_free(NULL));
  CHECK_OK(tessel_llm_free(NULL));
  CHECK_OK(tessel_sequence_free(NULL));
  tessel_session_options_init(NULL);
  tessel_llm_options_init(NULL);
  tessel_sampler_config_init(NULL);

  /* Forged handles: pointers the library never handed out are refused before they are read. */
  long long forged[16] = {0};
  CHECK_FAILS(tessel_model_num_outputs((tessel_model*)forged, &n), TESSEL_INVALID_ARGUMENT,
              "model is not a live tessel_model");
  CHECK_FAILS(tessel_session_run((tessel_session*)forged), TESSEL_INVALID_ARGUMENT,
              "session is not a live tessel_session");
  CHECK_FAILS(tessel_session_free((tessel_session*)forged), TESSEL_INVALID_ARGUMENT, "not a live");
  CHECK_FAILS(tessel_llm_vocab_size((tessel_llm*)forged, &n), TESSEL_INVALID_ARGUMENT, "not a live tessel_llm");
  CHECK_FAILS(tessel_sequence_length((tessel_sequence*)forged, &n), TESSEL_INVALID_ARGUMENT,
              "not a live tessel_sequence");
  CHECK(strstr(tessel_session_last_error((tessel_session*)forged), "not a live") != NULL);

  /* Files: missing, and present but not an artifact or a model. */
  model = (tessel_model*)1;
  tessel_status s = tessel_model_load("/nonexistent/model.tsl", &model);
  CHECK(s == TESSEL_NOT_FOUND);
  CHECK(model == NULL);
  CHECK(strstr(tessel_last_error(), "/nonexistent/model.tsl") != NULL);
  const char garbage[256] = "definitely not an artifact";
  CHECK(tessel_model_load_from_memory(garbage, sizeof(garbage), &model) != TESSEL_OK);
  CHECK(model == NULL && tessel_last_error()[0] != '\0');
  tessel_llm* llm = (tessel_llm*)1;
  s = tessel_llm_load("/nonexistent/model.gguf", NULL, &llm);
  CHECK(s != TESSEL_OK && llm == NULL);
  CHECK(strstr(tessel_last_error(), "/nonexistent/model.gguf") != NULL);

  /* Defaults. */
  tessel_session_options so;
  tessel_session_options_init(&so);
  CHECK(so.num_threads == 1 && so.spin_workers == 0 && so.force_reference == 0);
  tessel_llm_options lo;
  tessel_llm_options_init(&lo);
  CHECK(lo.threads == 1 && lo.max_sequences == 1 && lo.max_context == 0 && lo.max_batch == 64);
  tessel_sampler_config sc;
  tessel_sampler_config_init(&sc);
  CHECK(sc.temperature > 0.79f && sc.temperature < 0.81f && sc.top_k == 40);

  if (g_failures) {
    fprintf(stderr, "%d check(s) failed\n", g_failures);
    return 1;
  }
  printf("PASS\n");
  return 0;
}
