/* Checks and .npy reading for the C API's tests, which are C programs that see only tessel.h. */
#ifndef TESSEL_CAPI_C_TEST_UTIL_H_
#define TESSEL_CAPI_C_TEST_UTIL_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/tessel.h"

static int g_failures = 0;

#define CHECK(cond)                                                     \
  do {                                                                  \
    if (!(cond)) {                                                      \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++g_failures;                                                     \
    }                                                                   \
  } while (0)

/* A call that must succeed; on failure prints the library's message. */
#define CHECK_OK(call)                                                                       \
  do {                                                                                       \
    tessel_status _s = (call);                                                               \
    if (_s != TESSEL_OK) {                                                                   \
      fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #call,              \
              tessel_status_name(_s), tessel_last_error());                                  \
      ++g_failures;                                                                          \
    }                                                                                        \
  } while (0)

/* A call that must fail with `code` and leave a message containing `needle`. */
#define CHECK_FAILS(call, code, needle)                                                              \
  do {                                                                                               \
    tessel_status _s = (call);                                                                       \
    if (_s != (code)) {                                                                              \
      fprintf(stderr, "%s:%d: %s returned %s, expected %s (%s)\n", __FILE__, __LINE__, #call,        \
              tessel_status_name(_s), tessel_status_name(code), tessel_last_error());                \
      ++g_failures;                                                                                  \
    } else if (strstr(tessel_last_error(), (needle)) == NULL) {                                      \
      fprintf(stderr, "%s:%d: %s: message '%s' lacks '%s'\n", __FILE__, __LINE__, #call,             \
              tessel_last_error(), (needle));                                                        \
      ++g_failures;                                                                                  \
    }                                                                                                \
  } while (0)

/* Reads a whole file; *size receives its length. NULL if unreadable. */
static inline char* ReadFile(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* data = (char*)malloc((size_t)n + 1);
  if (data != NULL && fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    data = NULL;
  }
  fclose(f);
  if (data != NULL) data[n] = '\0';
  if (size != NULL) *size = (size_t)n;
  return data;
}

/* The data of a little-endian .npy file (format 1.x or 2.x); *bytes receives its size. The caller frees
 * the returned block through *block. */
static inline void* ReadNpy(const char* path, size_t* bytes, void** block) {
  size_t size = 0;
  char* data = ReadFile(path, &size);
  *block = data;
  if (data == NULL || size < 10 || memcmp(data, "\x93NUMPY", 6) != 0) {
    fprintf(stderr, "%s: not a .npy file\n", path);
    exit(1);
  }
  size_t header = data[6] == 1 ? 10 + (unsigned char)data[8] + 256u * (unsigned char)data[9]
                               : 12 + (unsigned char)data[8] + 256u * (unsigned char)data[9];
  *bytes = size - header;
  return data + header;
}

static inline float MaxAbsDiff(const float* a, const float* b, size_t n) {
  float m = 0;
  for (size_t i = 0; i < n; ++i) {
    float d = a[i] > b[i] ? a[i] - b[i] : b[i] - a[i];
    if (d > m || d != d) m = d != d ? 1e30f : d;
  }
  return m;
}

#endif /* TESSEL_CAPI_C_TEST_UTIL_H_ */
