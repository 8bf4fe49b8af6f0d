// ggml tensor element types: the id table every GGUF file uses, the exact block layouts of the types
// Tessel computes with, and reference (de)quantization with ggml's rounding.
#ifndef TESSEL_LLM_GGUF_GGML_TYPES_H_
#define TESSEL_LLM_GGUF_GGML_TYPES_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tessel::llm {

// Ids as stored in GGUF tensor infos (ggml.h's enum ggml_type). Only the ones Tessel names in code are
// listed; every other id in the table in ggml_types.cc is still known for sizes and messages.
enum class GgmlType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ8_0 = 8,
  kQ6_K = 14,
  kBF16 = 30,
};

struct GgmlTypeInfo {
  uint32_t id;
  const char* name;     // ggml's spelling, e.g. "Q4_0"
  int64_t block_size;   // elements per block
  int64_t block_bytes;  // bytes per block
  bool supported;       // Tessel can compute with it
};

// nullptr when `id` is not a ggml type at all.
const GgmlTypeInfo* FindGgmlType(uint32_t id);
// `t` must be a known type (any GgmlType value above is).
const GgmlTypeInfo& GetGgmlTypeInfo(GgmlType t);
absl::string_view GgmlTypeName(GgmlType t);
// Case-insensitive: "q4_0", "F16", ... Only supported types parse.
absl::StatusOr<GgmlType> ParseGgmlType(absl::string_view name);
// "F32, F16, BF16, Q8_0, Q4_0, Q4_1": for error messages.
const char* SupportedGgmlTypeNames();

// Bytes of `n` elements; n must be a multiple of the block size.
inline size_t GgmlRowBytes(GgmlType t, int64_t n) {
  const GgmlTypeInfo& info = GetGgmlTypeInfo(t);
  return static_cast<size_t>(n / info.block_size * info.block_bytes);
}

// Block layouts, bit-exact with ggml-common.h. Scales are IEEE half bits.
inline constexpr int kQuantBlock = 32;

struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQuantBlock];  // value = qs[j] * d
};
static_assert(sizeof(BlockQ8_0) == 34, "ggml block_q8_0 is 34 bytes");

struct BlockQ4_0 {
  uint16_t d;
  // Element j < 16 is the low nibble of qs[j], element j + 16 the high nibble; value = (q - 8) * d.
  uint8_t qs[kQuantBlock / 2];
};
static_assert(sizeof(BlockQ4_0) == 18, "ggml block_q4_0 is 18 bytes");

struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[kQuantBlock / 2];  // nibbles as in BlockQ4_0; value = q * d + m
};
static_assert(sizeof(BlockQ4_1) == 20, "ggml block_q4_1 is 20 bytes");

// Reference conversions of one row of `n` elements (a multiple of the block size) for supported
// types. Quantization follows ggml's quantize_row_*_ref exactly (same scales, same rounding), so
// files written here match llama.cpp's bit for bit.
void DequantizeRow(GgmlType t, const void* src, float* dst, int64_t n);
void QuantizeRow(GgmlType t, const float* src, void* dst, int64_t n);

}  // namespace tessel::llm

#endif  // TESSEL_LLM_GGUF_GGML_TYPES_H_
