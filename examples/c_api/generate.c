/* Streams a language model's continuation of a prompt through the C API:
 *   generate MODEL.gguf PROMPT_FILE [TOKENS [TEMPERATURE [SEED]]]
 * Prints the generated text only (not the prompt), as it comes. */
#include <stdio.h>
#include <stdlib.h>

#include "tessel/tessel.h"

static int32_t Print(int32_t token, const char* piece, size_t length, void* user_data) {
  (void)token;
  (void)user_data;
  fwrite(piece, 1, length, stdout);
  fflush(stdout);
  return 0; /* keep going */
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s MODEL.gguf PROMPT_FILE [TOKENS [TEMPERATURE [SEED]]]\n", argv[0]);
    return 2;
  }
  FILE* f = fopen(argv[2], "rb");
  if (f == NULL) {
    fprintf(stderr, "generate: cannot read %s\n", argv[2]);
    return 1;
  }
  static char prompt[1 << 16];
  prompt[fread(prompt, 1, sizeof(prompt) - 1, f)] = '\0';
  fclose(f);
  tessel_llm* llm = NULL;
  tessel_status s = tessel_llm_load(argv[1], NULL, &llm);
  if (s != TESSEL_OK) {
    fprintf(stderr, "generate: %s: %s\n", tessel_status_name(s), tessel_last_error());
    return 1;
  }
  tessel_sampler_config config;
  tessel_sampler_config_init(&config);
  if (argc > 4) config.temperature = (float)atof(argv[4]);
  if (argc > 5) config.seed = (uint64_t)strtoull(argv[5], NULL, 10);
  int32_t generated = 0;
  s = tessel_llm_generate(llm, prompt, argc > 3 ? atoi(argv[3]) : 64, &config, Print, NULL, &generated);
  if (s != TESSEL_OK) {
    fprintf(stderr, "generate: %s: %s\n", tessel_status_name(s), tessel_last_error());
    return 1;
  }
  tessel_llm_free(llm);
  fprintf(stderr, "\n[%d tokens, Tessel %s]\n", generated, tessel_version_string());
  return 0;
}
