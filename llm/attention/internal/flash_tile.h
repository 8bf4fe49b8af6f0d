// The tile kernels behind FlashAttention: one task (KV head, up to kQueryTile queries) each, all with
// the same signature, and the driver that runs a chosen kernel over every task. Private to
// llm/attention (the kernels and their test).
#ifndef TESSEL_LLM_ATTENTION_INTERNAL_FLASH_TILE_H_
#define TESSEL_LLM_ATTENTION_INTERNAL_FLASH_TILE_H_

#include <cstdint>

#include "kernels/registry/registry.h"
#include "llm/attention/flash_attention.h"

namespace tessel::llm {

// Attends queries [i0, min(n, i0 + kQueryTile)) of every query head of `kv_head`; scratch holds
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
// The same kernel built for AVX2 + FMA + F16C (flash_tile_avx2.cc; x86 only).
void flash_tile__avx2(const AttentionParams& p, const float* q, int64_t n, int64_t pos0, const KvView& kv,
                      float* out, int kv_head, int64_t i0, float* scratch);
// The same kernel built for AVX-512 with hardware f16 conversion (flash_tile_avx512.cc; x86 only).
void flash_tile__avx512(const AttentionParams& p, const float* q, int64_t n, int64_t pos0, const KvView& kv,
                        float* out, int kv_head, int64_t i0, float* scratch);

// Every tile kernel built for this target (op "flash_tile", dtypes "f32", layout "paged"), selected on
// ProblemShape{m = head_dim, n = KV block size}: the vector kernels are legal where
// FlashTileVectorShape holds, the generic one (backend "reference") everywhere.
using FlashTileKernel = KernelEntry<FlashTileFn>;
const KernelRegistry<FlashTileFn>& FlashTileKernels();

// Whether the vector kernels handle this head size and block size.
inline bool FlashTileVectorShape(int head_dim, int block_size) {
  return (head_dim == 32 || head_dim == 64 || head_dim == 128 || head_dim == 256) && block_size % 16 == 0;
}

size_t FlashScratchFloats(const AttentionParams& p);

// FlashAttention with a given tile kernel (tests run every kernel through this).
void RunFlashAttention(FlashTileFn tile, const AttentionParams& p, const float* q, int64_t n, int64_t pos0,
                       const KvView& kv, float* out, ThreadPool* pool, AttentionScratch* scratch);

}  // namespace tessel::llm

#endif  // TESSEL_LLM_ATTENTION_INTERNAL_FLASH_TILE_H_
