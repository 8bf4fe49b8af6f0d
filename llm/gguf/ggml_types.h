// ggml tensor element types: the id table every GGUF file uses, the exact block layouts of the types
// Tessel computes with, and reference (de)quantization with ggml's rounding.
#ifndef TESSEL_LLM_GGUF_GGML_TYPES_H_
#define TESSEL_LLM_GGUF_GGML_TYPES_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kernels/gemv/ggml_blocks.h"

namespace tessel::llm {

// Ids as stored in GGUF tensor infos (ggml.h's enum ggml_type). Only the ones Tessel names in code are
// listed; every other id in the table in ggml_types.cc is still known for sizes and messages.
enum class GgmlType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kIQ4_NL = 20,
  kIQ3_S = 21,  // not computed by Tessel; named by tests
  kIQ4_XS = 23,
  kBF16 = 30,
  // Tessel's group-wise INT4/INT3 (weight-only quantization, issue 9); ids unused by ggml. "A" types
  // are asymmetric (a zero point per group). Layout: see TesselGroupFormat below.
  kTesselI4G32 = 100,
  kTesselI4G32A = 101,
  kTesselI4G64 = 102,
  kTesselI4G64A = 103,
  kTesselI4G128 = 104,
  kTesselI4G128A = 105,
  kTesselI3G32 = 106,
  kTesselI3G32A = 107,
  kTesselI3G64 = 108,
  kTesselI3G64A = 109,
  kTesselI3G128 = 110,
  kTesselI3G128A = 111,
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
// "F32, F16, BF16, Q8_0, Q4_0, Q4_1, TESSEL_I4G128, ...": for error messages.
const char* SupportedGgmlTypeNames();

// Bytes of `n` elements; n must be a multiple of the block size.
inline size_t GgmlRowBytes(GgmlType t, int64_t n) {
  const GgmlTypeInfo& info = GetGgmlTypeInfo(t);
  return static_cast<size_t>(n / info.block_size * info.block_bytes);
}



// Tessel's group-wise formats. A row of n elements (n a multiple of the group size G) is stored as
// three planes, so that one row is exactly what kernels/gemv's Int4Group kernel reads (rows = 1):
//   codes   n * bits / 8 bytes, group by group (G * bits / 8 bytes each):
//           4 bits: byte j < G/2 holds element j (low nibble) and element j + G/2 (high nibble);
//           3 bits: G/4 bytes of low bit pairs, byte j < G/4 holding element j + k*G/4 at bits 2k..2k+1
//                   (k < 4), then G/8 bytes of high bits, byte j < G/8 holding element j + k*G/8 at bit k
//                   (k < 8);
//   scales  n / G IEEE halves;
//   zeros   asymmetric only: n / G bytes (0 .. 2^bits - 1), then n / G zero bytes, which keep every row
//           (and so every scale) 2-byte aligned.
// value = (code - zero) * scale; symmetric types use zero = 2^(bits - 1).
struct TesselGroupFormat {
  int bits = 4;
  int group = 128;
  bool asymmetric = false;

  int64_t CodeBytes(int64_t n) const { return n * bits / 8; }
  int64_t ScalesOffset(int64_t n) const { return CodeBytes(n); }
  int64_t ZerosOffset(int64_t n) const { return CodeBytes(n) + n / group * 2; }
  int zero_point() const { return 1 << (bits - 1); }
  int max_code() const { return (1 << bits) - 1; }
};

// False for every type but the Tessel group-wise ones.
bool GetTesselGroupFormat(GgmlType t, TesselGroupFormat* format);
// InvalidArgument unless bits is 3 or 4 and group 32, 64 or 128.
absl::StatusOr<GgmlType> TesselGroupType(int bits, int group, bool asymmetric);

// Packs one row of n codes (each 0 .. 2^bits - 1), with per-group scales (rounded to halves) and
// zeros (asymmetric only; ignored otherwise) into the format above.
void PackTesselGroupRow(GgmlType t, const uint8_t* codes, const float* scales, const uint8_t* zeros, int64_t n,
                        void* dst);
// Code of element i of a packed row (the inverse of the packing above).
int TesselGroupCode(const TesselGroupFormat& f, const uint8_t* row, int64_t i);

// Reference conversions of one row of `n` elements (a multiple of the block size) for supported
// types. Quantization writes the bytes ggml_quantize_chunk writes without an importance matrix (what
// llama.cpp's quantize writes without --imatrix) for every ggml type here: ggml's reference rounding
// for Q8_0, Q4_0, Q4_1, Q5_0 and Q5_1, its scale searches for the k-quants (weighted least-squares
// scale and min per sub-block, then the sub-block scales quantized under fp16 super-block scales) and
// for IQ4_NL / IQ4_XS (x^2-weighted least-squares scales from 15 starting points per block, codes to
// the nearest level). ggml_reference_test checks both directions against ggml's own library.
// Dequantization is ggml's for every type.
// Tessel group types quantize to nearest: symmetric scale = max|x| / 2^(bits-1) - 0.5 steps (so -max
// and +max land within half a step), asymmetric scale = (max - min) / (2^bits - 1) over a range that
// includes 0.
void DequantizeRow(GgmlType t, const void* src, float* dst, int64_t n);
// importance (optional): n per-element weights, an importance matrix's column values (llama.cpp's
// imatrix: the mean of each input column's squares over calibration data). Then the bytes are
// ggml_quantize_chunk's with that imatrix (Q4_0, Q4_1, Q5_0, Q5_1, the k-quants, IQ4_NL, IQ4_XS; the
// other types ignore it, as ggml's Q8_0 does).
void QuantizeRow(GgmlType t, const float* src, void* dst, int64_t n, const float* importance = nullptr);

}  // namespace tessel::llm

#endif  // TESSEL_LLM_GGUF_GGML_TYPES_H_
