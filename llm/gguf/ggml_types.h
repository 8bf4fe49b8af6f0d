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

// 32 elements with a fifth bit per element: bit j of qh (little-endian) is element j's. Element j < 16
// has its low 4 bits in qs[j]'s low nibble, element j + 16 in its high nibble. value = (q - 16) * d.
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kQuantBlock / 2];
};
static_assert(sizeof(BlockQ5_0) == 22, "ggml block_q5_0 is 22 bytes");

struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kQuantBlock / 2];  // as BlockQ5_0; value = q * d + m
};
static_assert(sizeof(BlockQ5_1) == 24, "ggml block_q5_1 is 24 bytes");

// ggml's k-quants: super-blocks of 256 elements in sub-blocks with integer scales under fp16
// super-block scales (ggml-common.h).
inline constexpr int kSuperBlock = 256;

// Elements 128n + 32j + l (n < 2, j < 4, l < 32) of a Q2_K / Q3_K super-block have their 2 low bits at
// bits 2j, 2j + 1 of qs[32n + l] and belong to sub-block 8n + 2j + l / 16 (16 sub-blocks of 16).
// Q2_K: scales[s] holds sub-block s's 4-bit scale (low nibble) and min (high nibble);
// value = d * scale * q - dmin * min.
struct BlockQ2_K {
  uint8_t scales[kSuperBlock / 16];
  uint8_t qs[kSuperBlock / 4];
  uint16_t d;
  uint16_t dmin;
};
static_assert(sizeof(BlockQ2_K) == 84, "ggml block_q2_K is 84 bytes");

// Q3_K: the third bit of element 128n + 32j + l is bit 4n + j of hmask[l]; value = d * (s - 32) *
// (q - (third bit ? 0 : 4)) with sub-block s's 6-bit scale: low 4 bits in scales[s % 8] (low nibble for
// s < 8), high 2 bits at bits 2 (s / 4), 2 (s / 4) + 1 of scales[8 + s % 4].
struct BlockQ3_K {
  uint8_t hmask[kSuperBlock / 8];
  uint8_t qs[kSuperBlock / 4];
  uint8_t scales[12];
  uint16_t d;
};
static_assert(sizeof(BlockQ3_K) == 110, "ggml block_q3_K is 110 bytes");

// 8 sub-blocks of 32. Sub-block j's 6-bit scale sc and min m (KQuantScaleMin): bytes j and j + 4 of
// `scales` (low 6 bits) for j < 4; for j >= 4 the low nibble (sc) and high nibble (m) of byte j + 4,
// with their top two bits in bits 6-7 of bytes j - 4 (sc) and j (m). The 128 `qs` bytes hold the
// elements in four 64-element chunks of 32 bytes: byte l of chunk c has element 64c + l in its low
// nibble (sub-block 2c) and element 64c + 32 + l in its high nibble (sub-block 2c + 1).
// value = d * sc * q - dmin * m.
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qs[kSuperBlock / 2];
};
static_assert(sizeof(BlockQ4_K) == 144, "ggml block_q4_K is 144 bytes");

// Q4_K plus a fifth bit: bit 2c (sub-block 2c) or 2c + 1 (sub-block 2c + 1) of qh[l] is the high bit of
// the element whose low nibble is in byte l of chunk c. value = d * sc * (q + 16 * h) - dmin * m.
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[kSuperBlock / 8];
  uint8_t qs[kSuperBlock / 2];
};
static_assert(sizeof(BlockQ5_K) == 176, "ggml block_q5_K is 176 bytes");

// 16 sub-blocks of 16 with int8 scales; two halves of 128 elements, half h using ql[64h ..], qh[32h ..]
// and scales[8h ..]. Within a half, element 32k + l (k < 4, l < 32) has its low 4 bits in ql[l + 32 *
// (k % 2)] (low nibble for k < 2, high nibble for k >= 2), its high 2 bits at bits 2k..2k+1 of qh[l],
// and the scale scales[2k + l / 16]. value = d * scale * (q - 32).
struct BlockQ6_K {
  uint8_t ql[kSuperBlock / 2];
  uint8_t qh[kSuperBlock / 4];
  int8_t scales[kSuperBlock / 16];
  uint16_t d;
};
static_assert(sizeof(BlockQ6_K) == 210, "ggml block_q6_K is 210 bytes");

// ggml's non-linear 4-bit types: a code indexes kIQ4NLValues, which spaces the 16 levels more densely
// near zero than a uniform grid.
inline constexpr int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                             1,    13,   25,  38,  53,  69,  89,  113};

// IQ4_NL: Q4_0's block (element j < 16 in the low nibble of qs[j], j + 16 in its high nibble) with
// value = d * kIQ4NLValues[q].
using BlockIQ4_NL = BlockQ4_0;

// IQ4_XS: 8 sub-blocks of 32, each IQ4_NL's nibbles (qs[16 j ..]) under a 6-bit scale ls: low 4 bits
// in scales_l[j / 2] (low nibble for even j), high 2 bits at bits 2j, 2j + 1 of scales_h.
// value = d * (ls - 32) * kIQ4NLValues[q].
struct BlockIQ4_XS {
  uint16_t d;
  uint16_t scales_h;
  uint8_t scales_l[kSuperBlock / 64];
  uint8_t qs[kSuperBlock / 2];
};
static_assert(sizeof(BlockIQ4_XS) == 136, "ggml block_iq4_xs is 136 bytes");

// IQ4_XS sub-block j's (j < 8) scale ls - 32 (-32 .. 31).
inline int IQ4XSScale(const BlockIQ4_XS& b, int j) {
  return (((b.scales_l[j / 2] >> (4 * (j % 2))) & 0x0F) | (((b.scales_h >> (2 * j)) & 3) << 4)) - 32;
}

// Q4_K / Q5_K sub-block j's (j < 8) 6-bit scale and min.
inline void KQuantScaleMin(const uint8_t* scales, int j, int* sc, int* m) {
  if (j < 4) {
    *sc = scales[j] & 63;
    *m = scales[j + 4] & 63;
  } else {
    *sc = (scales[j + 4] & 0x0F) | ((scales[j - 4] >> 6) << 4);
    *m = (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4);
  }
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
