// Weight-only quantized GEMV for LLM decode: y[rows] = W[rows x cols] * x[cols], W quantized, x and y
// f32. W is dequantized in registers; rows are split across a ThreadPool.
//
// Weight formats (rows contiguous, row r starts at r * RowBytes(format, cols, group)):
//   Q4_0  ggml block_q4_0: per 32 elements {fp16 d; uint8 qs[16]} (18 bytes); byte j holds element j
//         in its low nibble and element j + 16 in its high nibble; value = (nibble - 8) * d.
//   Q8_0  ggml block_q8_0: per 32 elements {fp16 d; int8 qs[32]} (34 bytes); value = qs * d.
//   Int4Group  group-wise INT4, group size G in {32, 64, 128}:
//         q      uint8 [rows][cols / 2]: within each group, byte j holds element j (low nibble) and
//                element j + G/2 (high nibble), i.e. Q4_0's nibble order widened to G;
//         scales f16 or f32 [rows][cols / G];
//         zeros  uint8 [rows][cols / G] with values 0..15, or null for the symmetric zero point 8;
//         value = (nibble - zero) * scale.
// Shapes: cols a multiple of 32 (Q4_0, Q8_0) or of G (Int4Group); check with ValidateGemv once at load
// time. The Gemv* calls assert and never fail.
//
// Kernels are registered in GemvKernels() (op "gemv"; dtypes "q4_0xf32", "q8_0xf32", "i4gxf32"), one
// per format and ISA: reference (portable C++), avx2, avx512, neon, sve. The first call of a format
// selects its kernel (TESSEL_FORCE_BACKEND honoured); SelectedGemvKernel says which.
#ifndef TESSEL_KERNELS_GEMV_GEMV_H_
#define TESSEL_KERNELS_GEMV_GEMV_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "kernels/registry/registry.h"
#include "support/thread_pool.h"

namespace tessel {

enum class GemvFormat { kQ4_0, kQ8_0, kInt4Group };

struct Int4GroupWeights {
  const uint8_t* q = nullptr;
  const void* scales = nullptr;    // f16 (uint16_t) or f32, per f16_scales
  const uint8_t* zeros = nullptr;  // nullptr: symmetric, zero point 8
  int64_t group_size = 128;
  bool f16_scales = true;
};

// Everything a GEMV kernel reads; a kernel computes y[row_begin, row_end).
struct GemvArgs {
  const void* w = nullptr;  // Q4_0 / Q8_0 blocks, or Int4Group nibbles
  const void* scales = nullptr;
  const uint8_t* zeros = nullptr;
  int64_t group_size = 32;
  bool f16_scales = true;
  const float* x = nullptr;
  float* y = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  // x quantized to int8 (GemvQ8Input), read by the GemvQ8Kernels() family only.
  const int8_t* xq = nullptr;
  const int32_t* xbias = nullptr;
  const float* xscale = nullptr;
};
using GemvFn = void (*)(const GemvArgs& args, int64_t row_begin, int64_t row_end);

// Bytes of one quantized row (the nibbles only, for Int4Group).
int64_t GemvRowBytes(GemvFormat format, int64_t cols);

// InvalidArgument when the shape or group size does not fit the format.
absl::Status ValidateGemv(GemvFormat format, int64_t rows, int64_t cols, int64_t group_size);

// `pool` may be null (runs on the calling thread).
void GemvQ4_0(const void* w, const float* x, float* y, int64_t rows, int64_t cols, ThreadPool* pool);
void GemvQ8_0(const void* w, const float* x, float* y, int64_t rows, int64_t cols, ThreadPool* pool);
void GemvInt4Group(const Int4GroupWeights& w, const float* x, float* y, int64_t rows, int64_t cols,
                   ThreadPool* pool);

// Runs `fn` over all rows of `args`, split across `pool` (may be null).
void RunGemv(GemvFn fn, const GemvArgs& args, ThreadPool* pool);

using GemvKernel = KernelEntry<GemvFn>;
const KernelRegistry<GemvFn>& GemvKernels();
// The kernel the Gemv* call for `format` uses (selected on first use).
const GemvKernel& SelectedGemvKernel(GemvFormat format);

// Q4_0 and Q8_0 against x quantized to int8 once per call, as llama.cpp's q8_0 activations: each
// 32-element block of x becomes round(x / dx) with dx = max|x| / 127, and the integer dot products
// run on int8 hardware (AVX-512 VNNI vpdpbusd). Results differ from the f32-input kernels by the
// activation rounding: at most sum over blocks of dx / 2 * sum |w| (plus float rounding).
//
// Layout, padded with zeros to a whole number of groups (Q4_0: 4 blocks = 128 elements, Q8_0: 2
// blocks = 64 elements); every 4 bytes of q feed one int32 "lane" of vpdpbusd:
//   Q4_0  q per group: bytes 16i..16i+15 = elements 0..15 of block i (i < 4), bytes 64+16i.. = its
//         elements 16..31, so that one 64-byte vector meets the low nibbles of 4 blocks and the next
//         the high ones. Lane 4i+l covers q bytes 16i+4l.. and 64+16i+4l.. (4 each).
//   Q8_0  q in natural order; lane j of a group covers q bytes 4j..4j+3.
//   bias[lane] = -zero * (sum of the q bytes the lane covers), zero = 8 (Q4_0 nibbles) or 128 (Q8_0
//         weights biased to unsigned); scale[lane] = dx of the lane's block.
struct GemvQ8Input {
  int8_t* q = nullptr;
  int32_t* bias = nullptr;
  float* scale = nullptr;
};
// Elements of q (and cols) after padding; lanes of bias and scale.
int64_t GemvQ8PaddedCols(GemvFormat format, int64_t cols);
int64_t GemvQ8Lanes(GemvFormat format, int64_t cols);
// Quantizes x[cols] into `out` (buffers of the sizes above); format is kQ4_0 or kQ8_0.
void QuantizeGemvInput(GemvFormat format, const float* x, int64_t cols, const GemvQ8Input& out);
// Sets args.xq / xbias / xscale to `in`.
void SetGemvQ8Input(const GemvQ8Input& in, GemvArgs& args);

// Kernels reading args.xq/xbias/xscale (dtypes "q4_0xq8", "q8_0xq8"): a reference (exact integer dot
// products, double accumulation) and avx512vnni.
const KernelRegistry<GemvFn>& GemvQ8Kernels();
// The selected int8-input kernel for kQ4_0 / kQ8_0, or nullptr when only the reference runs on this
// CPU (then the f32-input kernels are faster) and no backend is forced.
const GemvKernel* FastGemvQ8Kernel(GemvFormat format);

// Several tokens (prefill): y[t * ldy + r] = sum_k W[r, k] x_t[k] for t < n, each x_t quantized with
// QuantizeGemvInput into its own GemvQ8Input, token t's at xq + t * xq_stride and xbias / xscale +
// t * lane_stride (at least GemvQ8PaddedCols / GemvQ8Lanes of cols), plus its per-block terms from
// GemmQ8BlockTerms at block_bias / block_scale + t * block_stride (>= cols / 32). Per token, the results
// equal the GemvQ8Kernels() ones up to float summation order. Kernels compute rows
// [row_begin, row_end) for all n tokens.
struct GemmQ8Args {
  const void* w = nullptr;  // Q4_0 / Q8_0 blocks
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t n = 0;
  const int8_t* xq = nullptr;
  const int32_t* xbias = nullptr;
  const float* xscale = nullptr;
  int64_t xq_stride = 0;
  int64_t lane_stride = 0;
  const int32_t* block_bias = nullptr;
  const float* block_scale = nullptr;
  int64_t block_stride = 0;
  float* y = nullptr;
  int64_t ldy = 0;
  // Group-wise Panel16 (dtype "group_panel16xq8") only: the group size (32, 64 or 128), whether the groups
  // have zero points, and the code width (4 or 3 bits). x is quantized in the Q4_0 layout
  // (QuantizeGemvInput(kQ4_0, ...)).
  int64_t group_size = 0;
  bool asymmetric = false;
  int group_bits = 4;
  // Q4_1 on the group layout (PackGemvPanel16Q4_1): G = 32, value = code * scale + min.
  bool group_mins = false;
  // ggml's k-quants on their Panel16 layouts (PackGemvPanel16KQuant): 2 ... 6 = Q2_K ... Q6_K,
  // kKQuantIQ4_XS = IQ4_XS; else 0.
  // The group fields above are ignored. x in the Q4_0 layout. Q2_K, Q3_K and Q6_K read half_bias: per token
  // (half_stride apart) -32 x the sum of x_q over each 16-element half of every 32-block
  // (GemmQ8HalfBias).
  int kquant = 0;
  const int32_t* half_bias = nullptr;
  int64_t half_stride = 0;
  // Q4_0 Panel16 ("q4_0_panel16xq8") only: the nibbles index ggml's IQ4_NL levels (kvalues_iq4nl) instead of
  // meaning code - 8; the matrix is ggml IQ4_NL blocks (Q4_0's bytes) packed by PackGemvPanel16(kQ4_0).
  bool nonlinear = false;
};
using GemmQ8Fn = void (*)(const GemmQ8Args& args, int64_t row_begin, int64_t row_end);
// Per 32-block b < cols / 32 of a quantized token: block_bias[b] = the sum of the block's bias lanes
// (-zero * the sum of its q), block_scale[b] = its dx.
void GemmQ8BlockTerms(GemvFormat format, const GemvQ8Input& in, int64_t cols, int32_t* block_bias,
                      float* block_scale);

// op "gemm", dtypes "q4_0xq8" / "q8_0xq8": a reference (the GEMV reference per token) and avx512vnni.
using GemmQ8Kernel = KernelEntry<GemmQ8Fn>;
const KernelRegistry<GemmQ8Fn>& GemmQ8Kernels();
// The selected multi-token int8-input kernel for kQ4_0 / kQ8_0, or nullptr when only the reference
// runs on this CPU and no backend is forced.
const GemmQ8Kernel* FastGemmQ8Kernel(GemvFormat format);

// Panel16 layout (dtypes "q4_0_panel16xq8" / "q8_0_panel16xq8"): Q4_0 / Q8_0 weights repacked once, at load, so
// that the int8 kernels hold one row per int32 lane and read 16 rows per vector, in one linear stream
// with no shuffles (decode) and no per-call repacking (prefill). Same bytes as the ggml layout, plus
// padding:
//   rows in panels of 16 (the last one zero-padded); blocks in pairs (an odd last block padded with a
//   zero block); panel p, pair j at (p * pairs + j) * pair_bytes, pairs = ceil(cols / 64);
//   a pair is 64 bytes of scales, then K vectors of 64 bytes for its first block and K for its second
//   (scales first, so that a kernel reading a pair's scales and then each block's vectors walks the
//   stream in address order: with the scales last, the first block's scale load ran ahead of its
//   vectors, and a load-only walk of two streams ran at 21-23 GB/s against 27 in order, on Zen 4):
//   Q4_0 (K = 4, 576-byte pairs): vector k, dword lane r = qs bytes 4k..4k+3 of row 16p + r's block
//         (low nibbles: elements 4k..4k+3, high nibbles: 16 + 4k..), on aarch64 XOR 0x88 (each nibble
//         the 4-bit two's complement of code - 8, for SDOT);
//   Q8_0 (K = 8, 1088-byte pairs): vector k, lane r = qs bytes 4k..4k+3, on x86 XOR 0x80 (unsigned,
//         biased, for VPDPBUSD / VPMADDUBSW), on aarch64 as they are (signed, for SDOT);
//   scales: fp16 d of the pair's first block for rows 0..15, then of its second block.
// Kernels take GemmQ8Args with w = the packed matrix; row_begin is a multiple of 16 (or rows).
int64_t GemvPanel16Bytes(GemvFormat format, int64_t rows, int64_t cols);
void PackGemvPanel16(GemvFormat format, const void* w, int64_t rows, int64_t cols, void* out);
// Row r of a packed matrix back in ggml blocks (GemvRowBytes(format, cols) bytes at row_out).
void UnpackGemvPanel16Row(GemvFormat format, const void* packed, int64_t cols, int64_t r, void* row_out);
// Panel16 of group-wise INT4 and INT3 (dtype "group_panel16xq8"): the same int8 kernels for Int4Group-style
// weights with group size G in {32, 64, 128}, symmetric (zero point 8 / 4) or asymmetric (a zero point
// per group), at the format's own bytes per weight. Rows in panels of 16 as above; columns in units of
// 256 (8 blocks of 32; the last unit zero-padded); panel p, unit u at (p * units + u) * unit_bytes,
// units = ceil(cols / 256):
//   scales  256 / G groups x 16 rows of fp16 (group i's at 32 * i);
//   zeros   asymmetric only: 256 / G groups x 16 rows of bytes (group i's at 16 * i), padded to a
//           multiple of 64 bytes;
//   codes   8 blocks of 64-byte vectors, dword lane r = 4 bytes of row 16p + r:
//           INT4, 4 vectors per block: vector k's low nibbles are elements 32i + 4k .. 32i + 4k + 3 of
//             the unit, its high nibbles elements 32i + 16 + 4k ..: Q4_0's Panel16 vectors, so x is
//             read as the Q4_0 kernels read it;
//           INT3, 3 vectors per block: the low two bits of elements 4f + j (byte j, bits 2f..2f+1,
//             f < 4) of the block in vector 0 and of elements 16 + 4f + j in vector 1; the high bit of
//             element 4b + j (byte j, bit b, b < 8) in vector 2.
// unit_bytes = scales + zeros + 8 x vectors x 64: 4.125 / 3.125 bits per weight for symmetric G = 128,
// as the row formats. Kernels take GemmQ8Args with group_size / asymmetric / group_bits set;
// value = (code - zero) * scale.
//
// The row format it is packed from: one record per row (llm's Tessel group types, ggml_types.h
// TesselGroupFormat), row r at base + r * row_bytes, its cols * bits / 8 bytes of codes at +0 (INT4:
// Int4Group nibbles; INT3: per group G/4 bytes of low bit pairs, then G/8 bytes of high bits), its
// cols / G fp16 scales at +scales_offset and, asymmetric only, its cols / G zeros at +zeros_offset.
struct Int4GroupRecords {
  const void* base = nullptr;
  int64_t row_bytes = 0;
  int64_t scales_offset = 0;
  int64_t zeros_offset = 0;
  int64_t group_size = 128;
  bool asymmetric = false;
  int bits = 4;  // 4 or 3
};
int64_t GemvPanel16GroupBytes(int64_t rows, int64_t cols, int64_t group_size, bool asymmetric, int bits = 4);
// out: GemvPanel16GroupBytes bytes, 64-byte aligned.
void PackGemvPanel16Group(const Int4GroupRecords& w, int64_t rows, int64_t cols, void* out);
// Row r of a packed matrix back as its record (format.row_bytes bytes at record_out; bytes outside the
// codes, scales and zeros are zeroed; format.base is not read).
void UnpackGemvPanel16GroupRow(const void* packed, const Int4GroupRecords& format, int64_t cols, int64_t r,
                               void* record_out);
// ggml's Q4_1 (per 32 elements {fp16 d, fp16 m, 16 bytes of Q4_0-ordered nibbles}, value = q * d + m) on
// the same layout: G = 32, INT4 vectors, and after each unit's scales a plane of mins (group i's 16 fp16
// mins at scale_bytes + 32 * i); 5 bits per weight, as Q4_1. Kernels take group_size = 32, group_bits =
// 4, group_mins = true.
int64_t GemvPanel16Q4_1Bytes(int64_t rows, int64_t cols);
void PackGemvPanel16Q4_1(const void* w, int64_t rows, int64_t cols, void* out);
// Row r back in Q4_1 blocks (GgmlRowBytes: cols / 32 * 20 bytes at row_out).
void UnpackGemvPanel16Q4_1Row(const void* packed, int64_t cols, int64_t r, void* row_out);

// ggml's Q2_K ... Q6_K on Panel16 (dtype "group_panel16xq8" with GemmQ8Args::kquant = 2 ... 6), exact and at
// nearly the file's bytes per weight. Rows in panels of 16; columns in units of one 256-element
// super-block; panel p, unit u at (p * units + u) * unit_bytes. A unit (Panel16KQuantGeometry):
//   64 bytes   the 16 rows' fp16 d, then (Q2_K, Q4_K, Q5_K) their fp16 dmin;
//   256 bytes  Q4_K, Q5_K: per sub-block 0..7 the 16 rows' 6-bit scales, then their mins (16 bytes each);
//              Q6_K: the int8 scales of the 16 sub-blocks of 16, 16 rows each;
//              Q3_K (int8: its 6-bit scale - 32) and Q2_K (the file's scale | min << 4 bytes): per block
//              of 32 its two sub-blocks' bytes row by row (row r's at 2r, 2r + 1: the kernels widen the
//              32 bytes to one int16 pair per row and scale both halves' dots with one vpdpwssd);
//   8 blocks of 32 elements: Q2_K 2 vectors, the low bit pairs of elements 4f + j (vector 0) and 16 + 4f
//              + j (vector 1) at bits 2f of byte j of each lane (1344-byte units: 2.625 bits per weight, as
//              the file); Q3_K 3 vectors, Q2_K's two and the third bits of elements 4f + j at bit f (f < 8)
//              (1856-byte units: 3.625 against 3.4375); Q4_K 4 vectors, Q4_0's Panel16 vectors of the
//              block's codes (2368-byte units: 4.625 bits per weight against the file's 4.5); Q5_K 5
//              vectors: byte j of vector 0 holds the fifth bits of elements 4k + j at bit k and of 16 + 4k + j
//              at bit 4 + k, then Q4_K's 4 vectors of low nibbles (2880-byte units: 5.625 against 5.5);
//              Q6_K 6 vectors: vectors 0 and 1
//              hold the low nibbles of elements 16 + 4k + j, k = 0, 1 and 2, 3 (low, high nibble); byte j
//              of vector 2 + k holds element 4k + j's code in bits 0-5 and the high 2 bits of element
//              16 + 4k + j in bits 6-7 (3392-byte units: 6.625 bits per weight against 6.5625).
// IQ4_XS (kquant = kKQuantIQ4_XS): a 192-byte head (the rows' fp16 d, 32 bytes of padding, then per
// sub-block j < 8 the 16 rows' int8 scales ls - 32), then Q4_K's 4 vectors per block of the codes
// (2240-byte units: 4.375 bits per weight against the file's 4.25).
// value = d x scale x code - dmin x min (Q2_K, Q4_K, Q5_K), d x scale x (code - 32) (Q6_K) or
// (code - 4) (Q3_K), d x scale x level[code] (IQ4_XS, ggml's kvalues_iq4nl).
// The row format is ggml's blocks (block_q4_K, block_q5_K, block_q6_K; kernels/gemv/internal/quant_blocks.h).
inline constexpr int kKQuantIQ4_XS = 7;
int64_t GemvPanel16KQuantBytes(int kquant, int64_t rows, int64_t cols);
void PackGemvPanel16KQuant(int kquant, const void* w, int64_t rows, int64_t cols, void* out);
// Row r back in ggml blocks (cols / 256 x the block's 84, 110, 144, 176, 210 or 136 bytes at row_out).
void UnpackGemvPanel16KQuantRow(int kquant, const void* packed, int64_t cols, int64_t r, void* row_out);
// GemmQ8Args::half_bias of one token quantized in the Q4_0 layout: cols / 16 values.
void GemmQ8HalfBias(const GemvQ8Input& in, int64_t cols, int32_t* half_bias);

// ggml's Q5_0 (per 32 elements {fp16 d, 32 fifth bits, Q4_0's nibbles}, value = (q - 16) x d) and Q5_1
// ({fp16 d, fp16 m, fifth bits, nibbles}, value = q x d + m) on the group layout: G = 32, 5 vectors per
// block (the fifth bits as Q5_K's vector 0, then Q4_0's nibble vectors), Q5_1 with Q4_1's plane of mins
// (5.5 / 6 bits per weight, as the files). Kernels take
// group_size = 32, group_bits = 5 and group_mins (Q5_1).
int64_t GemvPanel16Q5Bytes(int64_t rows, int64_t cols, bool mins);
void PackGemvPanel16Q5(const void* w, int64_t rows, int64_t cols, bool mins, void* out);
// Row r back in Q5_0 / Q5_1 blocks (cols / 32 x 22 or 24 bytes at row_out).
void UnpackGemvPanel16Q5Row(const void* packed, int64_t cols, bool mins, int64_t r, void* row_out);

// op "gemm", dtypes "q4_0_panel16xq8" / "q8_0_panel16xq8" / "group_panel16xq8": a reference and avx512vnni.
const KernelRegistry<GemmQ8Fn>& GemmQ8Panel16Kernels();
// The selected Panel16 kernel for kQ4_0 / kQ8_0 / kInt4Group, or nullptr when only the reference runs
// on this CPU (then the row layout with the f32-input kernels is faster; do not repack).
const GemmQ8Kernel* FastGemmQ8Panel16Kernel(GemvFormat format);
// A kernel for some k-quants (dtype "kquant_panel16xq8": Q4_K, Q5_K, Q6_K and IQ4_XS on Arm dotprod), or
// nullptr; the group kernel above serves every k-quant where it runs.
const GemmQ8Kernel* FastGemmQ8Panel16KQuantKernel(int kquant);

}  // namespace tessel

#endif  // TESSEL_KERNELS_GEMV_GEMV_H_
