/* ABI guard: the size and field offsets of every public struct and enum, recorded per header version.
 * Changing a layout without bumping TESSEL_VERSION_MAJOR / MINOR fails here; after a bump, add the new
 * version's row (and keep the old ones: they document what each release shipped).
 * Built from tessel.h alone (no internal header), as an application would. */
#include <stddef.h>
#include <stdio.h>

#include "tessel/tessel.h"

typedef struct {
  int major, minor;
  const char* what;
  size_t value;
} Layout;

/* LP64 (x86_64, aarch64). */
static const Layout kRecorded[] = {
    {0, 1, "sizeof(tessel_status)", 4},
    {0, 1, "sizeof(tessel_dtype)", 4},
    {0, 1, "sizeof(tessel_tensor_info)", 88},
    {0, 1, "offsetof(tessel_tensor_info, name)", 0},
    {0, 1, "offsetof(tessel_tensor_info, dtype)", 8},
    {0, 1, "offsetof(tessel_tensor_info, rank)", 12},
    {0, 1, "offsetof(tessel_tensor_info, shape)", 16},
    {0, 1, "offsetof(tessel_tensor_info, bytes)", 80},
    {0, 1, "TESSEL_MAX_RANK", 8},
    {0, 1, "sizeof(tessel_session_options)", 12},
    {0, 1, "offsetof(tessel_session_options, num_threads)", 0},
    {0, 1, "offsetof(tessel_session_options, spin_workers)", 4},
    {0, 1, "offsetof(tessel_session_options, force_reference)", 8},
    {0, 1, "sizeof(tessel_op_profile)", 32},
    {0, 1, "offsetof(tessel_op_profile, name)", 0},
    {0, 1, "offsetof(tessel_op_profile, kernel)", 8},
    {0, 1, "offsetof(tessel_op_profile, milliseconds)", 16},
    {0, 1, "offsetof(tessel_op_profile, bytes)", 24},
    {0, 1, "sizeof(tessel_llm_options)", 24},
    {0, 1, "offsetof(tessel_llm_options, threads)", 0},
    {0, 1, "offsetof(tessel_llm_options, max_context)", 4},
    {0, 1, "offsetof(tessel_llm_options, max_sequences)", 8},
    {0, 1, "offsetof(tessel_llm_options, max_batch)", 12},
    {0, 1, "offsetof(tessel_llm_options, kv_f32)", 16},
    {0, 1, "offsetof(tessel_llm_options, mmap)", 20},
    {0, 1, "sizeof(tessel_sampler_config)", 32},
    {0, 1, "offsetof(tessel_sampler_config, temperature)", 0},
    {0, 1, "offsetof(tessel_sampler_config, top_k)", 4},
    {0, 1, "offsetof(tessel_sampler_config, top_p)", 8},
    {0, 1, "offsetof(tessel_sampler_config, min_p)", 12},
    {0, 1, "offsetof(tessel_sampler_config, repeat_penalty)", 16},
    {0, 1, "offsetof(tessel_sampler_config, repeat_last_n)", 20},
    {0, 1, "offsetof(tessel_sampler_config, seed)", 24},
    {0, 1, "TESSEL_OK", 0},
    {0, 1, "TESSEL_CANCELLED", 9},
    {0, 1, "TESSEL_DTYPE_F32", 0},
    {0, 1, "TESSEL_DTYPE_BOOL", 7},
};

#define ROW(expr) {#expr, (size_t)(expr)}
static const struct {
  const char* what;
  size_t value;
} kActual[] = {
    ROW(sizeof(tessel_status)),
    ROW(sizeof(tessel_dtype)),
    ROW(sizeof(tessel_tensor_info)),
    ROW(offsetof(tessel_tensor_info, name)),
    ROW(offsetof(tessel_tensor_info, dtype)),
    ROW(offsetof(tessel_tensor_info, rank)),
    ROW(offsetof(tessel_tensor_info, shape)),
    ROW(offsetof(tessel_tensor_info, bytes)),
    ROW(TESSEL_MAX_RANK),
    ROW(sizeof(tessel_session_options)),
    ROW(offsetof(tessel_session_options, num_threads)),
    ROW(offsetof(tessel_session_options, spin_workers)),
    ROW(offsetof(tessel_session_options, force_reference)),
    ROW(sizeof(tessel_op_profile)),
    ROW(offsetof(tessel_op_profile, name)),
    ROW(offsetof(tessel_op_profile, kernel)),
    ROW(offsetof(tessel_op_profile, milliseconds)),
    ROW(offsetof(tessel_op_profile, bytes)),
    ROW(sizeof(tessel_llm_options)),
    ROW(offsetof(tessel_llm_options, threads)),
    ROW(offsetof(tessel_llm_options, max_context)),
    ROW(offsetof(tessel_llm_options, max_sequences)),
    ROW(offsetof(tessel_llm_options, max_batch)),
    ROW(offsetof(tessel_llm_options, kv_f32)),
    ROW(offsetof(tessel_llm_options, mmap)),
    ROW(sizeof(tessel_sampler_config)),
    ROW(offsetof(tessel_sampler_config, temperature)),
    ROW(offsetof(tessel_sampler_config, top_k)),
    ROW(offsetof(tessel_sampler_config, top_p)),
    ROW(offsetof(tessel_sampler_config, min_p)),
    ROW(offsetof(tessel_sampler_config, repeat_penalty)),
    ROW(offsetof(tessel_sampler_config, repeat_last_n)),
    ROW(offsetof(tessel_sampler_config, seed)),
    ROW(TESSEL_OK),
    ROW(TESSEL_CANCELLED),
    ROW(TESSEL_DTYPE_F32),
    ROW(TESSEL_DTYPE_BOOL),
};

static int Matches(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}

int main(void) {
  const size_t recorded = sizeof(kRecorded) / sizeof(kRecorded[0]);
  const size_t actual = sizeof(kActual) / sizeof(kActual[0]);
  int failures = 0, rows = 0;
  for (size_t i = 0; i < actual; ++i) {
    int found = 0;
    for (size_t j = 0; j < recorded; ++j) {
      if (kRecorded[j].major != TESSEL_VERSION_MAJOR || kRecorded[j].minor != TESSEL_VERSION_MINOR) continue;
      if (!Matches(kRecorded[j].what, kActual[i].what)) continue;
      found = 1;
      ++rows;
      if (kRecorded[j].value != kActual[i].value) {
        fprintf(stderr, "%s is %zu; version %d.%d recorded %zu: a layout change needs a version bump\n",
                kActual[i].what, kActual[i].value, TESSEL_VERSION_MAJOR, TESSEL_VERSION_MINOR, kRecorded[j].value);
        ++failures;
      }
    }
    if (!found) {
      fprintf(stderr, "%s = %zu has no recorded value for version %d.%d: add the row\n", kActual[i].what,
              kActual[i].value, TESSEL_VERSION_MAJOR, TESSEL_VERSION_MINOR);
      ++failures;
    }
  }
  printf("%d layout rows checked for version %d.%d\n", rows, TESSEL_VERSION_MAJOR, TESSEL_VERSION_MINOR);
  return failures ? 1 : 0;
}
