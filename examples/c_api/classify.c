/* Classifies a binary PPM image with a compiled Tessel CNN through the C API:
 *   classify MODEL.tsl IMAGE.ppm [LABELS.txt]
 * The image is resized (nearest pixel) to the model's input [1, 3, H, W], scaled to [0, 1], run, and the
 * three most likely classes printed, most likely first: "label probability". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/tessel.h"

static int Fail(const char* what, tessel_status s) {
  fprintf(stderr, "classify: %s: %s: %s\n", what, tessel_status_name(s), tessel_last_error());
  return 1;
}

/* A P6 PPM with maxval 255: *w x *h RGB bytes, or NULL. */
static unsigned char* ReadPpm(const char* path, int* w, int* h) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  int maxval = 0;
  unsigned char* rgb = NULL;
  if (fscanf(f, "P6 %d %d %d", w, h, &maxval) == 3 && maxval == 255 && *w > 0 && *h > 0 && fgetc(f) != EOF) {
    rgb = (unsigned char*)malloc((size_t)*w * *h * 3);
    if (rgb != NULL && fread(rgb, 3, (size_t)*w * *h, f) != (size_t)*w * *h) {
      free(rgb);
      rgb = NULL;
    }
  }
  fclose(f);
  return rgb;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s MODEL.tsl IMAGE.ppm [LABELS.txt]\n", argv[0]);
    return 2;
  }
  tessel_model* model = NULL;
  tessel_status s = tessel_model_load(argv[1], &model);
  if (s != TESSEL_OK) return Fail("loading the model", s);
  tessel_tensor_info in, out;
  if ((s = tessel_model_input_info(model, 0, &in)) != TESSEL_OK) return Fail("input", s);
  if ((s = tessel_model_output_info(model, 0, &out)) != TESSEL_OK) return Fail("output", s);
  if (in.dtype != TESSEL_DTYPE_F32 || in.rank != 4 || in.shape[0] != 1 || in.shape[1] != 3 ||
      out.dtype != TESSEL_DTYPE_F32) {
    fprintf(stderr, "classify: expected an f32 image model with input [1,3,H,W]\n");
    return 1;
  }
  int w = 0, h = 0;
  unsigned char* rgb = ReadPpm(argv[2], &w, &h);
  if (rgb == NULL) {
    fprintf(stderr, "classify: %s: not a binary PPM (P6, maxval 255)\n", argv[2]);
    return 1;
  }
  tessel_session* session = NULL;
  if ((s = tessel_session_create(model, NULL, &session)) != TESSEL_OK) return Fail("creating a session", s);
  /* Write the pixels straight into the session's input (no copy). */
  float* x = NULL;
  if ((s = tessel_session_input_buffer(session, 0, (void**)&x, NULL)) != TESSEL_OK) return Fail("input buffer", s);
  const int64_t H = in.shape[2], W = in.shape[3];
  for (int c = 0; c < 3; ++c) {
    for (int64_t y = 0; y < H; ++y) {
      for (int64_t xx = 0; xx < W; ++xx) {
        const int64_t sy = y * h / H, sx = xx * w / W;
        x[(c * H + y) * W + xx] = rgb[(sy * w + sx) * 3 + c] / 255.0f;
      }
    }
  }
  if ((s = tessel_session_run(session)) != TESSEL_OK) return Fail("running", s);
  const void* data = NULL;
  size_t bytes = 0;
  if ((s = tessel_session_output_buffer(session, 0, &data, &bytes)) != TESSEL_OK) return Fail("output", s);
  const float* logits = (const float*)data;
  const int n = (int)(bytes / sizeof(float));
  char labels[1000][64];
  int num_labels = 0;
  if (argc > 3) {
    FILE* f = fopen(argv[3], "r");
    while (f != NULL && num_labels < 1000 && fgets(labels[num_labels], sizeof(labels[0]), f) != NULL) {
      labels[num_labels][strcspn(labels[num_labels], "\r\n")] = '\0';
      ++num_labels;
    }
    if (f != NULL) fclose(f);
  }
  float max = logits[0], sum = 0;
  for (int i = 1; i < n; ++i) max = logits[i] > max ? logits[i] : max;
  for (int i = 0; i < n; ++i) sum += expf(logits[i] - max);
  int shown[3] = {-1, -1, -1};
  for (int k = 0; k < 3 && k < n; ++k) {
    int best = -1;
    for (int i = 0; i < n; ++i) {
      if (i == shown[0] || i == shown[1]) continue;
      if (best < 0 || logits[i] > logits[best]) best = i;
    }
    shown[k] = best;
    if (best < num_labels) {
      printf("%s %.4f\n", labels[best], expf(logits[best] - max) / sum);
    } else {
      printf("class%d %.4f\n", best, expf(logits[best] - max) / sum);
    }
  }
  free(rgb);
  tessel_session_free(session);
  tessel_model_free(model);
  return 0;
}
