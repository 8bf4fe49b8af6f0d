// The tile kernels behind flash attention (llm/attention/flash_attention.h): one task (KV head, up to
// kFlashQueryTile queries) each, all with the same signature, over the paged KV cache's view. The
// generic kernel is the reference twin; the vector kernel is written once (internal/flash_tile_vec16.inc)
// and built portably, for AVX2 and for AVX-512. Kernels trust their arguments and never allocate.
#ifndef TESSEL_KERNELS_ATTENTION_FLASH_TILE_H_
#define TESSEL_KERNELS_ATTENTION_FLASH_TILE_H_

#include <cstddef>
#include <cstdint>

#include "kernels/attention/kv_view.h"
#include "kernels/registry/registry.h"

namespace tessel {

struct AttentionParams {
  int num_heads = 0;
  int num_kv_heads = 0;  // divides num_heads; query head h reads KV head h / (num_heads / num_kv_heads)
  int head_dim = 0;
  float scale = 0;         // usually 1 / sqrt(head_dim)
  int sliding_window = 0;  // 0: unlimited; else the query at p sees keys (p - window, p]
};

constexpr int kFlashQueryTile = 16;  // queries per task
constexpr int kFlashKeyTile = 16;    // keys per online-softmax step (one vector)

// Attends queries [i0, min(n, i0 + kFlashQueryTile)) of every query head of `kv_head`; scratch holds
// FlashScratchFloats(p) floats.
using FlashTileFn = void (*)(const AttentionParams& p, const float* q, int64_t n, int64_t pos0, const KvView& kv,
                             float* out, int kv_head, int64_t i0, float* scratch);

// Any head size and block size, scalar loops.
void flash_tile__generic(const AttentionParams& p, const float* q, int64_t n, int64_t pos0, const KvView& kv,
                         float* out, int kv_head, int64_t i0, float* scratch);
// Head sizes 32, 64, 128, 256 and block sizes that are multiples of 16 (FlashTileVectorShape):
// 16 keys per vector, in GCC vector extensions (SSE/AVX2 on x86, NEON on aarch64).
void flash_tile__vec16(const AttentionParams& p, const float* q, int64_t n, int64_t pos0, const KvView& kv,
                       float* out, int kv_head, int64_t i0, float* scratch);
#if defined(__x86_64__)
// The same kernel built for AVX2 + FMA + F16C (flash_tile_avx2.cc).
void flash_tile__avx2(const AttentionParams& p, const float* q, int64_t n, int64_t pos0, const KvView& kv,
                      float* out, int kv_head, int64_t i0, float* scratch);
// The same kernel built for AVX-512 with hardware f16 conversion (flash_tile_avx512.cc).
void flash_tile__avx512(const AttentionParams& p, const float* q, int64_t n, int64_t pos0, const KvView& kv,
                        float* out, int kv_head, int64_t i0, float* scratch);
#endif

// Every tile kernel built for this target (op "flash_tile", dtypes "f32", layout "paged"), selected on
// ProblemShape{m = head_dim, n = KV block size}: the vector kernels are legal where
// FlashTileVectorShape holds, the generic one (backend "reference") everywhere.
using FlashTileKernel = KernelEntry<FlashTileFn>;
const KernelRegistry<FlashTileFn>& FlashTileKernels();

// Whether the vector kernels handle this head size and block size.
inline bool FlashTileVectorShape(int head_dim, int block_size) {
  return (head_dim == 32 || head_dim == 64 || head_dim == 128 || head_dim == 256) && block_size % 16 == 0;
}

// Scratch floats any tile kernel needs per task.
size_t FlashScratchFloats(const AttentionParams& p);

}  // namespace tessel

#endif  // TESSEL_KERNELS_ATTENTION_FLASH_TILE_H_
