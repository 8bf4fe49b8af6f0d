// Panel16 layout (gemv.h): packing, unpacking and the reference kernel, portable C++.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/gemv/gemv.h"
#include "kernels/gemv/internal/gemv_kernels.h"
#include "kernels/gemv/internal/quant_blocks.h"

namespace tessel {
namespace {

constexpr int kPanelRows = 16;

struct Geometry {
  bool q4;
  int vecs;  // K: 64-byte vectors per block
  int64_t block_bytes, nb, pairs, pair_bytes;
  Geometry(GemvFormat format, int64_t cols)
      : q4(format == GemvFormat::kQ4_0),
        vecs(q4 ? 4 : 8),
        block_bytes(q4 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0)),
        nb(cols / kQuantBlock),
        pairs((nb + 1) / 2),
        pair_bytes(2 * int64_t{vecs} * 64 + 64) {}
  // Where block b of row r lives: its vector bytes start at *vec (dword lane = r % 16), its scale at *scale.
  void Locate(int64_t r, int64_t b, int64_t* vec, int64_t* scale) const {
    const int64_t pair = ((r / kPanelRows) * pairs + b / 2) * pair_bytes;
    const int lane = static_cast<int>(r % kPanelRows), h = static_cast<int>(b % 2);
    *vec = pair + 64 + int64_t{h} * vecs * 64 + 4 * lane;
    *scale = pair + 2 * (h * kPanelRows + lane);
  }
};

}  // namespace

int64_t GemvPanel16Bytes(GemvFormat format, int64_t rows, int64_t cols) {
  const Geometry g(format, cols);
  return (rows + kPanelRows - 1) / kPanelRows * g.pairs * g.pair_bytes;
}

void PackGemvPanel16(GemvFormat format, const void* w, int64_t rows, int64_t cols, void* out) {
  const Geometry g(format, cols);
  auto* dst = static_cast<uint8_t*>(out);
  const auto* src = static_cast<const uint8_t*>(w);
  const int64_t row_bytes = g.nb * g.block_bytes;
  const uint32_t flip = (g.q4 ? kPanel16Q4Flip : kPanel16Q8Flip) * 0x01010101u;
  // In destination order, so that the writes stream; the reads walk 16 rows side by side.
  for (int64_t p = 0; p * kPanelRows < rows; ++p) {
    const int lanes = static_cast<int>(std::min<int64_t>(kPanelRows, rows - p * kPanelRows));
    for (int64_t j = 0; j < g.pairs; ++j) {
      uint8_t* pair = dst + (p * g.pairs + j) * g.pair_bytes;
      std::memset(pair, 0, g.pair_bytes);  // missing rows and the padding block stay zero
      for (int h = 0; h < 2 && 2 * j + h < g.nb; ++h) {
        for (int lane = 0; lane < lanes; ++lane) {
          const int64_t r = p * kPanelRows + lane, b = 2 * j + h;
          const uint8_t* blk = src + r * row_bytes + b * g.block_bytes;
          int64_t vec, scale;
          g.Locate(r, b, &vec, &scale);
          for (int k = 0; k < g.vecs; ++k) {
            uint32_t v;
            std::memcpy(&v, blk + 2 + 4 * k, 4);
            v ^= flip;
            std::memcpy(dst + vec + 64 * k, &v, 4);
          }
          std::memcpy(dst + scale, blk, 2);
        }
      }
    }
  }
}

void UnpackGemvPanel16Row(GemvFormat format, const void* packed, int64_t cols, int64_t r, void* row_out) {
  const Geometry g(format, cols);
  const auto* src = static_cast<const uint8_t*>(packed);
  const uint8_t flip = g.q4 ? kPanel16Q4Flip : kPanel16Q8Flip;
  for (int64_t b = 0; b < g.nb; ++b) {
    uint8_t* blk = static_cast<uint8_t*>(row_out) + b * g.block_bytes;
    int64_t vec, scale;
    g.Locate(r, b, &vec, &scale);
    for (int k = 0; k < g.vecs; ++k) {
      for (int i = 0; i < 4; ++i) blk[2 + 4 * k + i] = src[vec + 64 * k + i] ^ flip;
    }
    std::memcpy(blk, src + scale, 2);
  }
}

namespace {

// Signed weights from the packed bytes (Q4_0: code - 8, or IQ4_NL's level), x from the GemvQ8Input
// layout, exact integer dots per block, double accumulation; block_bias is not used (the kernel's
// zero-point trick is not re-derived here).
void Panel16Reference(GemvFormat format, const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  const Geometry g(format, a.cols);
  const auto* w = static_cast<const uint8_t*>(a.w);
  for (int64_t t = 0; t < a.n; ++t) {
    const int8_t* xq = a.xq + t * a.xq_stride;
    const float* bscale = a.block_scale + t * a.block_stride;
    for (int64_t r = row_begin; r < row_end; ++r) {
      double sum = 0;
      for (int64_t b = 0; b < g.nb; ++b) {
        int64_t vec, scale;
        g.Locate(r, b, &vec, &scale);
        int64_t dot = 0;
        for (int j = 0; j < kQuantBlock; ++j) {
          int q, x;
          if (g.q4) {
            const uint8_t byte = w[vec + 64 * ((j % 16) / 4) + j % 4] ^ kPanel16Q4Flip;
            const int code = j < 16 ? byte & 15 : byte >> 4;
            q = a.nonlinear ? kIQ4NLValues[code] : code - 8;
            x = xq[(b / 4) * 128 + 16 * (b % 4) + (j < 16 ? j : 64 + j - 16)];
          } else {
            q = static_cast<int>(w[vec + 64 * (j / 4) + j % 4] ^ kPanel16Q8Flip);
            q = q >= 128 ? q - 256 : q;
            x = xq[b * kQuantBlock + j];
          }
          dot += int64_t{q} * x;
        }
        uint16_t d;
        std::memcpy(&d, w + scale, 2);
        sum += static_cast<double>(HalfToFloat(d)) * bscale[b] * static_cast<double>(dot);
      }
      a.y[t * a.ldy + r] = static_cast<float>(sum);
    }
  }
}

}  // namespace

namespace {

// Element e of row r in a group Panel16 matrix (gemv.h): the first byte of its block's vectors for
// the row's lane, and the element's index in the block.
int64_t BlockBase(const Panel16GroupGeometry& g, int64_t r, int64_t e, int* j) {
  const int64_t unit = ((r / kPanelRows) * g.units + e / Panel16GroupGeometry::kUnitCols) * g.unit_bytes;
  *j = static_cast<int>(e % kQuantBlock);
  return unit + g.Vector((e % Panel16GroupGeometry::kUnitCols) / kQuantBlock, 0) + 4 * (r % kPanelRows);
}
int GetPanelCode(const Panel16GroupGeometry& g, int bits, const uint8_t* w, int64_t r, int64_t e) {
  int j;
  const uint8_t* p = w + BlockBase(g, r, e, &j);
  if (bits == 5) {
    // Vector 0: fifth bits (element 4k + j at bit k, 16 + 4k + j at bit 4 + k); vectors 1..4: nibbles.
    const uint8_t byte = p[64 + ((j % 16) / 4) * 64 + j % 4];
    const int high = (p[j % 4] >> ((j < 16 ? 0 : 4) + (j % 16) / 4)) & 1;
    return (j < 16 ? byte & 15 : byte >> 4) | high << 4;
  }
  if (bits == 4) {
    const uint8_t byte = p[((j % 16) / 4) * 64 + j % 4];
    return j < 16 ? byte & 15 : byte >> 4;
  }
  const int low = (p[(j < 16 ? 0 : 64) + j % 4] >> (2 * ((j % 16) / 4))) & 3;
  const int high = (p[128 + j % 4] >> (j / 4)) & 1;
  return low | high << 2;
}
// Ors element e's code into a row record (ggml_types.h TesselGroupFormat).
void OrRecordCode(const Int4GroupRecords& f, uint8_t* rec, int64_t e, int code) {
  const int64_t g = e / f.group_size, j = e % f.group_size;
  uint8_t* q = rec + g * f.group_size * f.bits / 8;
  if (f.bits == 4) {
    const int64_t half = f.group_size / 2;
    q[j % half] |= static_cast<uint8_t>(code << (j < half ? 0 : 4));
    return;
  }
  const int64_t quarter = f.group_size / 4, eighth = f.group_size / 8;
  q[j % quarter] |= static_cast<uint8_t>((code & 3) << (2 * (j / quarter)));
  q[quarter + j % eighth] |= static_cast<uint8_t>((code >> 2) << (j / eighth));
}
// One 32-element block of an INT3 row record's group (its codes at q, the block's first element e0 of
// the group) as the block's three Panel16 dwords at o, o + 64 and o + 128. G is a template argument so
// that the byte indices and shifts fold to constants once e0 is known per case: a 1.1B-parameter model
// packs 1.1e9 codes at load (with them computed at run time, 3-4 s).
template <int G>
inline void PackInt3Block(const uint8_t* q, int64_t e0, uint8_t* o) {
  constexpr int kQuarter = G / 4, kEighth = G / 8;
  // The three dwords as little-endian words: byte j % 4 of each, bits by field (l) or high bit (h).
  uint32_t l0 = 0, l1 = 0, h = 0;
  auto block = [&](auto first) {
    constexpr int kE0 = decltype(first)::value;
#pragma GCC unroll 32
    for (int j = 0; j < kQuantBlock; ++j) {
      const int e = kE0 + j;
      const uint32_t low = (q[e % kQuarter] >> (2 * (e / kQuarter))) & 3u;
      const uint32_t high = (q[kQuarter + e % kEighth] >> (e / kEighth)) & 1u;
      const int byte = 8 * (j % 4);
      if (j < 16) {
        l0 |= low << (byte + 2 * (j / 4));
      } else {
        l1 |= low << (byte + 2 * ((j - 16) / 4));
      }
      h |= high << (byte + j / 4);
    }
  };
  switch (e0 / kQuantBlock) {
    case 0: block(std::integral_constant<int, 0>()); break;
    case 1: if constexpr (G > 32) block(std::integral_constant<int, 32>()); break;
    case 2: if constexpr (G > 64) block(std::integral_constant<int, 64>()); break;
    default: if constexpr (G > 64) block(std::integral_constant<int, 96>()); break;
  }
  std::memcpy(o, &l0, 4);
  std::memcpy(o + 64, &l1, 4);
  std::memcpy(o + 128, &h, 4);
}

// Byte offset of the unit holding row r's group `gg` (groups counted from column 0).
int64_t GroupUnit(const Panel16GroupGeometry& g, int64_t r, int64_t gg) {
  return ((r / kPanelRows) * g.units + gg / g.groups_per_unit) * g.unit_bytes;
}

}  // namespace

int64_t GemvPanel16GroupBytes(int64_t rows, int64_t cols, int64_t group_size, bool asymmetric, int bits) {
  const Panel16GroupGeometry g(cols, group_size, asymmetric, bits);
  return (rows + kPanelRows - 1) / kPanelRows * g.panel_bytes();
}

void PackGemvPanel16Group(const Int4GroupRecords& w, int64_t rows, int64_t cols, void* out) {
  const Panel16GroupGeometry g(cols, w.group_size, w.asymmetric, w.bits);
  auto* dst = static_cast<uint8_t*>(out);
  std::memset(dst, 0, GemvPanel16GroupBytes(rows, cols, w.group_size, w.asymmetric, w.bits));  // padding stays 0
  const int64_t groups = cols / w.group_size;
  // Panel by panel, so that the writes of one panel stay in cache while its 16 rows are read; block by
  // block, the block's elements straight from its group's code bytes.
  for (int64_t p = 0; p * kPanelRows < rows; ++p) {
    for (int64_t r = p * kPanelRows; r < std::min(rows, (p + 1) * kPanelRows); ++r) {
      const uint8_t* rec = static_cast<const uint8_t*>(w.base) + r * w.row_bytes;
      const int lane = static_cast<int>(r % kPanelRows);
      for (int64_t b = 0; b < cols / kQuantBlock; ++b) {
        const uint8_t* q = rec + b * kQuantBlock / w.group_size * (w.group_size * w.bits / 8);  // the block's group
        const int64_t e0 = b * kQuantBlock % w.group_size;  // its first element in the group
        uint8_t* o = dst + (p * g.units + b / 8) * g.unit_bytes + g.Vector(b % 8, 0) + 4 * lane;
        if (w.bits == 4) {
          // G = 32: the group is one block in Q4_0's nibble order, its bytes as they are. Larger groups:
          // the block's 32 elements lie in one half of the group (halves of 32 or 64 elements, blocks at
          // multiples of 32), so their codes are the low or the high nibbles of 32 consecutive bytes,
          // which combine 8 at a time in 64-bit words.
          const int64_t half = w.group_size / 2;
          const bool high = e0 >= half;
          const uint8_t* src = q + (high ? e0 - half : e0);
          constexpr uint64_t kLow = 0x0f0f0f0f0f0f0f0full;
          for (int i = 0; i < 2; ++i) {
            uint64_t a, b = 0;  // elements 8i .. 8i + 7 and 16 + 8i .. of the block (G > 32)
            std::memcpy(&a, src + 8 * i, 8);
            if (w.group_size > kQuantBlock) std::memcpy(&b, src + 16 + 8 * i, 8);  // G = 32: past the group
            const uint64_t v = w.group_size == kQuantBlock ? a
                               : high                  ? ((a >> 4) & kLow) | (b & ~kLow)
                                                       : (a & kLow) | ((b & kLow) << 4);
            std::memcpy(o + (2 * i) * 64, &v, 4);  // bytes 8i .. 8i + 3: vector 2i
            std::memcpy(o + (2 * i + 1) * 64, reinterpret_cast<const uint8_t*>(&v) + 4, 4);
          }
        } else {
          switch (w.group_size) {
            case 32: PackInt3Block<32>(q, e0, o); break;
            case 64: PackInt3Block<64>(q, e0, o); break;
            default: PackInt3Block<128>(q, e0, o); break;
          }
        }
      }
      for (int64_t gg = 0; gg < groups; ++gg) {
        const int64_t unit = GroupUnit(g, r, gg), i = gg % g.groups_per_unit;
        std::memcpy(dst + unit + Panel16GroupGeometry::Scales(i) + 2 * lane, rec + w.scales_offset + 2 * gg, 2);
        if (w.asymmetric) dst[unit + g.Zeros(i) + lane] = rec[w.zeros_offset + gg];
      }
    }
  }
}

void UnpackGemvPanel16GroupRow(const void* packed, const Int4GroupRecords& format, int64_t cols, int64_t r,
                               void* record_out) {
  const Panel16GroupGeometry g(cols, format.group_size, format.asymmetric, format.bits);
  const auto* src = static_cast<const uint8_t*>(packed);
  auto* rec = static_cast<uint8_t*>(record_out);
  std::memset(rec, 0, format.row_bytes);
  for (int64_t e = 0; e < cols; ++e) OrRecordCode(format, rec, e, GetPanelCode(g, format.bits, src, r, e));
  const int lane = static_cast<int>(r % kPanelRows);
  for (int64_t gg = 0; gg < cols / format.group_size; ++gg) {
    const int64_t unit = GroupUnit(g, r, gg), i = gg % g.groups_per_unit;
    std::memcpy(rec + format.scales_offset + 2 * gg, src + unit + Panel16GroupGeometry::Scales(i) + 2 * lane, 2);
    if (format.asymmetric) rec[format.zeros_offset + gg] = src[unit + g.Zeros(i) + lane];
  }
}

int64_t GemvPanel16Q4_1Bytes(int64_t rows, int64_t cols) {
  const Panel16GroupGeometry g(cols, kQuantBlock, false, 4, /*mins=*/true);
  return (rows + kPanelRows - 1) / kPanelRows * g.panel_bytes();
}

void PackGemvPanel16Q4_1(const void* w, int64_t rows, int64_t cols, void* out) {
  const Panel16GroupGeometry g(cols, kQuantBlock, false, 4, /*mins=*/true);
  auto* dst = static_cast<uint8_t*>(out);
  std::memset(dst, 0, GemvPanel16Q4_1Bytes(rows, cols));
  const int64_t nb = cols / kQuantBlock, row_bytes = nb * int64_t{sizeof(BlockQ4_1)};
  for (int64_t r = 0; r < rows; ++r) {
    const int lane = static_cast<int>(r % kPanelRows);
    for (int64_t b = 0; b < nb; ++b) {
      BlockQ4_1 blk;
      std::memcpy(&blk, static_cast<const uint8_t*>(w) + r * row_bytes + b * int64_t{sizeof(BlockQ4_1)}, sizeof(blk));
      const int64_t unit = GroupUnit(g, r, b), i = b % g.groups_per_unit;
      // Q4_1's nibbles are in Q4_0's order: qs bytes 4k..4k+3 are vector k's dword.
      for (int k = 0; k < 4; ++k) std::memcpy(dst + unit + g.Vector(i, k) + 4 * lane, blk.qs + 4 * k, 4);
      std::memcpy(dst + unit + Panel16GroupGeometry::Scales(i) + 2 * lane, &blk.d, 2);
      std::memcpy(dst + unit + g.Mins(i) + 2 * lane, &blk.m, 2);
    }
  }
}

void UnpackGemvPanel16Q4_1Row(const void* packed, int64_t cols, int64_t r, void* row_out) {
  const Panel16GroupGeometry g(cols, kQuantBlock, false, 4, /*mins=*/true);
  const auto* src = static_cast<const uint8_t*>(packed);
  const int lane = static_cast<int>(r % kPanelRows);
  for (int64_t b = 0; b < cols / kQuantBlock; ++b) {
    BlockQ4_1 blk;
    const int64_t unit = GroupUnit(g, r, b), i = b % g.groups_per_unit;
    for (int k = 0; k < 4; ++k) std::memcpy(blk.qs + 4 * k, src + unit + g.Vector(i, k) + 4 * lane, 4);
    std::memcpy(&blk.d, src + unit + Panel16GroupGeometry::Scales(i) + 2 * lane, 2);
    std::memcpy(&blk.m, src + unit + g.Mins(i) + 2 * lane, 2);
    std::memcpy(static_cast<uint8_t*>(row_out) + b * int64_t{sizeof(BlockQ4_1)}, &blk, sizeof(blk));
  }
}

namespace {

inline uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// KBlockCodes four at a time: word w holds the codes of elements 4w .. 4w + 3 of block i, one per byte
// (shifted 32-bit words: the bits that cross from a neighbouring byte are masked off).
void KBlockCodeWords(int kquant, const uint8_t* blk, int i, uint32_t* words) {
  for (int w = 0; w < 8; ++w) {
    uint32_t c;
    if (kquant == 2 || kquant == 3) {
      const int n = i / 4, j = i % 4;
      const size_t qs = kquant == 2 ? offsetof(BlockQ2_K, qs) : offsetof(BlockQ3_K, qs);
      c = (Load32(blk + qs + 32 * n + 4 * w) >> (2 * j)) & 0x03030303u;
      if (kquant == 3) c |= ((Load32(blk + offsetof(BlockQ3_K, hmask) + 4 * w) >> (4 * n + j)) & 0x01010101u) << 2;
    } else if (kquant == 4 || kquant == 5) {
      const size_t qs = kquant == 4 ? offsetof(BlockQ4_K, qs) : offsetof(BlockQ5_K, qs);
      c = (Load32(blk + qs + 32 * (i / 2) + 4 * w) >> (4 * (i % 2))) & 0x0F0F0F0Fu;
      if (kquant == 5) c |= ((Load32(blk + offsetof(BlockQ5_K, qh) + 4 * w) >> i) & 0x01010101u) << 4;
    } else if (kquant == 6) {
      const int h = i / 4, k = i % 4;
      const uint32_t low = Load32(blk + offsetof(BlockQ6_K, ql) + 64 * h + 32 * (k % 2) + 4 * w) >> (4 * (k / 2));
      const uint32_t high = Load32(blk + offsetof(BlockQ6_K, qh) + 32 * h + 4 * w) >> (2 * k);
      c = (low & 0x0F0F0F0Fu) | (high & 0x03030303u) << 4;
    } else {  // IQ4_XS: Q4_0's nibble order within each 32-element sub-block
      c = (Load32(blk + offsetof(BlockIQ4_XS, qs) + 16 * i + 4 * (w % 4)) >> (w < 4 ? 0 : 4)) & 0x0F0F0F0Fu;
    }
    words[w] = c;
  }
}

// The 32 codes of block i (< 8) of a k-quant super-block, one per byte (Q4_K 0..15, Q6_K 0..63).
void KBlockCodes(int kquant, const uint8_t* blk, int i, uint8_t* codes) {
  uint32_t words[8];
  KBlockCodeWords(kquant, blk, i, words);
  std::memcpy(codes, words, sizeof(words));  // little-endian: byte b of word w is element 4w + b
}

// Inverse of KBlockCodes: ors block i's codes into a zeroed super-block's code bytes.
void OrKBlockCodes(int kquant, const uint8_t* codes, int i, uint8_t* blk) {
  if (kquant == 2) {
    uint8_t* qs = blk + offsetof(BlockQ2_K, qs) + 32 * (i / 4);
    for (int l = 0; l < kQuantBlock; ++l) qs[l] |= static_cast<uint8_t>((codes[l] & 3) << (2 * (i % 4)));
    return;
  }
  if (kquant == 3) {
    const int n = i / 4, j = i % 4;
    uint8_t* qs = blk + offsetof(BlockQ3_K, qs) + 32 * n;
    uint8_t* hm = blk + offsetof(BlockQ3_K, hmask);
    for (int l = 0; l < kQuantBlock; ++l) {
      qs[l] |= static_cast<uint8_t>((codes[l] & 3) << (2 * j));
      hm[l] |= static_cast<uint8_t>((codes[l] >> 2) << (4 * n + j));
    }
    return;
  }
  if (kquant == kKQuantIQ4_XS) {
    uint8_t* qs = blk + offsetof(BlockIQ4_XS, qs) + 16 * i;
    for (int l = 0; l < kQuantBlock / 2; ++l) qs[l] = static_cast<uint8_t>((codes[l] & 15) | (codes[l + 16] & 15) << 4);
    return;
  }
  if (kquant == 4 || kquant == 5) {
    uint8_t* qs = blk + (kquant == 4 ? offsetof(BlockQ4_K, qs) : offsetof(BlockQ5_K, qs)) + 32 * (i / 2);
    for (int l = 0; l < kQuantBlock; ++l) {
      qs[l] |= static_cast<uint8_t>(i % 2 == 0 ? codes[l] & 15 : (codes[l] & 15) << 4);
    }
    if (kquant == 5) {
      uint8_t* qh = blk + offsetof(BlockQ5_K, qh);
      for (int l = 0; l < kQuantBlock; ++l) qh[l] |= static_cast<uint8_t>((codes[l] >> 4) << i);
    }
    return;
  }
  const int h = i / 4, k = i % 4;
  uint8_t* ql = blk + offsetof(BlockQ6_K, ql) + 64 * h + 32 * (k % 2);
  uint8_t* qh = blk + offsetof(BlockQ6_K, qh) + 32 * h;
  for (int l = 0; l < kQuantBlock; ++l) {
    ql[l] |= static_cast<uint8_t>(k < 2 ? codes[l] & 15 : (codes[l] & 15) << 4);
    qh[l] |= static_cast<uint8_t>((codes[l] >> 4) << (2 * k));
  }
}

int64_t KBlockBytes(int kquant) {
  return kquant == 2   ? sizeof(BlockQ2_K)
         : kquant == 3 ? sizeof(BlockQ3_K)
         : kquant == 4 ? sizeof(BlockQ4_K)
         : kquant == 5 ? sizeof(BlockQ5_K)
         : kquant == 6 ? sizeof(BlockQ6_K)
                       : sizeof(BlockIQ4_XS);
}

// Vector of block i holding Q4_0-style nibbles k (Q4_K, Q5_K, IQ4_XS) or element 4k + j's code (Q6_K).
int NibbleVector(int kquant, int k) { return kquant == 4 || kquant == kKQuantIQ4_XS ? k : kquant == 5 ? 1 + k : 2 + k; }

// The inverse of IQ4XSScale (ggml_blocks.h): sub-block j's scale into a zeroed block's scale bits.
void OrIQ4XSScale(int scale, int j, BlockIQ4_XS* b) {
  const int u = scale + 32;
  b->scales_l[j / 2] |= static_cast<uint8_t>((u & 15) << (4 * (j % 2)));
  b->scales_h |= static_cast<uint16_t>((u >> 4) << (2 * j));
}

// Offset of row r's unit u in a k-quant Panel16 matrix.
int64_t KUnit(const Panel16KQuantGeometry& g, int64_t r, int64_t u) {
  return ((r / kPanelRows) * g.units + u) * g.unit_bytes;
}

}  // namespace

int64_t GemvPanel16KQuantBytes(int kquant, int64_t rows, int64_t cols) {
  return (rows + kPanelRows - 1) / kPanelRows * Panel16KQuantGeometry(cols, kquant).panel_bytes();
}

void PackGemvPanel16KQuant(int kquant, const void* w, int64_t rows, int64_t cols, void* out) {
  const Panel16KQuantGeometry g(cols, kquant);
  auto* dst = static_cast<uint8_t*>(out);
  std::memset(dst, 0, GemvPanel16KQuantBytes(kquant, rows, cols));
  const int64_t bb = KBlockBytes(kquant), row_bytes = g.units * bb;
  for (int64_t r = 0; r < rows; ++r) {
    const int lane = static_cast<int>(r % kPanelRows);
    for (int64_t u = 0; u < g.units; ++u) {
      const uint8_t* blk = static_cast<const uint8_t*>(w) + r * row_bytes + u * bb;
      uint8_t* unit = dst + KUnit(g, r, u);
      for (int i = 0; i < 8; ++i) {
        // Four codes per 32-bit word (KBlockCodeWords), combined into the layout's vector words: every
        // step moves 4 elements (a per-element loop made the packers ~70% of a Q4_K_M load).
        uint32_t c[8];
        KBlockCodeWords(kquant, blk, i, c);
        auto out = [&](int v) { return unit + g.Vector(i, v) + 4 * lane; };
        uint32_t v[6] = {};
        if (kquant == 2 || kquant == 3) {
          // INT3's vectors: low bit pairs of elements 4f + b (vector 0) and 16 + 4f + b (vector 1) at bits
          // 2f of byte b, and (Q3_K) third bits of elements 4f + b at bit f of vector 2's byte b.
          for (int f = 0; f < 4; ++f) {
            v[0] |= (c[f] & 0x03030303u) << (2 * f);
            v[1] |= (c[4 + f] & 0x03030303u) << (2 * f);
          }
          for (int f = 0; f < 8 && kquant == 3; ++f) v[2] |= ((c[f] >> 2) & 0x01010101u) << f;
        } else {
          for (int k = 0; k < 4; ++k) {
            const int nv = NibbleVector(kquant, k);
            if (kquant != 6) {
              v[nv] = (c[k] & 0x0F0F0F0Fu) | (c[4 + k] & 0x0F0F0F0Fu) << 4;
            } else {
              v[nv] = c[k] | ((c[4 + k] >> 4) & 0x03030303u) << 6;
              v[k / 2] |= (c[4 + k] & 0x0F0F0F0Fu) << (4 * (k % 2));
            }
            if (kquant == 5) {
              // Vector 0: bit k of byte j the fifth bit of element 4k + j, bit 4 + k that of 16 + 4k + j.
              v[0] |= ((c[k] >> 4) & 0x01010101u) << k | ((c[4 + k] >> 4) & 0x01010101u) << (4 + k);
            }
          }
        }
        for (int k = 0; k < g.vectors_per_block; ++k) std::memcpy(out(k), &v[k], 4);
      }
      if (kquant == 2) {
        std::memcpy(unit + Panel16KQuantGeometry::D() + 2 * lane, blk + offsetof(BlockQ2_K, d), 2);
        std::memcpy(unit + Panel16KQuantGeometry::Dmin() + 2 * lane, blk + offsetof(BlockQ2_K, dmin), 2);
        for (int s = 0; s < 16; ++s) unit[g.ScaleByte(s, lane)] = blk[offsetof(BlockQ2_K, scales) + s];
      } else if (kquant == 3) {
        std::memcpy(unit + Panel16KQuantGeometry::D() + 2 * lane, blk + offsetof(BlockQ3_K, d), 2);
        const uint8_t* s12 = blk + offsetof(BlockQ3_K, scales);
        for (int s = 0; s < 16; ++s) {
          const int u = ((s12[s % 8] >> (s < 8 ? 0 : 4)) & 15) | ((s12[8 + s % 4] >> (2 * (s / 4))) & 3) << 4;
          unit[g.ScaleByte(s, lane)] = static_cast<uint8_t>(static_cast<int8_t>(u - 32));
        }
      } else if (kquant == kKQuantIQ4_XS) {
        BlockIQ4_XS x;
        std::memcpy(&x, blk, offsetof(BlockIQ4_XS, qs));
        std::memcpy(unit + Panel16KQuantGeometry::D() + 2 * lane, &x.d, 2);
        for (int j = 0; j < 8; ++j) unit[g.Scales(j) + lane] = static_cast<uint8_t>(IQ4XSScale(x, j));
      } else if (kquant != 6) {
        BlockQ4_K k;  // Q5_K's d, dmin and scales sit where Q4_K's do
        std::memcpy(&k, blk, offsetof(BlockQ4_K, qs));
        std::memcpy(unit + Panel16KQuantGeometry::D() + 2 * lane, &k.d, 2);
        std::memcpy(unit + Panel16KQuantGeometry::Dmin() + 2 * lane, &k.dmin, 2);
        for (int j = 0; j < 8; ++j) {
          int sc, m;
          KQuantScaleMin(k.scales, j, &sc, &m);
          unit[g.Scales(j) + lane] = static_cast<uint8_t>(sc);
          unit[g.Mins(j) + lane] = static_cast<uint8_t>(m);
        }
      } else {
        std::memcpy(unit + Panel16KQuantGeometry::D() + 2 * lane, blk + offsetof(BlockQ6_K, d), 2);
        for (int j = 0; j < 16; ++j) unit[g.Scales(j) + lane] = blk[offsetof(BlockQ6_K, scales) + j];
      }
    }
  }
}

void UnpackGemvPanel16KQuantRow(int kquant, const void* packed, int64_t cols, int64_t r, void* row_out) {
  const Panel16KQuantGeometry g(cols, kquant);
  const auto* src = static_cast<const uint8_t*>(packed);
  const int64_t bb = KBlockBytes(kquant);
  const int lane = static_cast<int>(r % kPanelRows);
  std::memset(row_out, 0, g.units * bb);
  for (int64_t u = 0; u < g.units; ++u) {
    uint8_t* blk = static_cast<uint8_t*>(row_out) + u * bb;
    const uint8_t* unit = src + KUnit(g, r, u);
    for (int i = 0; i < 8; ++i) {
      uint8_t c[kQuantBlock];
      if (kquant == 2 || kquant == 3) {
        const uint8_t* v0 = unit + g.Vector(i, 0) + 4 * lane;
        const uint8_t* v1 = unit + g.Vector(i, 1) + 4 * lane;
        const uint8_t* h = unit + g.Vector(i, 2) + 4 * lane;  // Q3_K
        for (int f = 0; f < 4; ++f) {
          for (int b = 0; b < 4; ++b) {
            const int h0 = kquant == 3 ? (h[b] >> f) & 1 : 0, h1 = kquant == 3 ? (h[b] >> (4 + f)) & 1 : 0;
            c[4 * f + b] = static_cast<uint8_t>(((v0[b] >> (2 * f)) & 3) | h0 << 2);
            c[16 + 4 * f + b] = static_cast<uint8_t>(((v1[b] >> (2 * f)) & 3) | h1 << 2);
          }
        }
        OrKBlockCodes(kquant, c, i, blk);
        continue;
      }
      for (int k = 0; k < 4; ++k) {
        const uint8_t* v = unit + g.Vector(i, NibbleVector(kquant, k)) + 4 * lane;
        const uint8_t* n = unit + g.Vector(i, k / 2) + 4 * lane;  // Q6_K
        const uint8_t* h = unit + g.Vector(i, 0) + 4 * lane;      // Q5_K
        for (int b = 0; b < 4; ++b) {
          if (kquant == 4 || kquant == kKQuantIQ4_XS) {
            c[4 * k + b] = v[b] & 15;
            c[16 + 4 * k + b] = v[b] >> 4;
          } else if (kquant == 5) {
            c[4 * k + b] = static_cast<uint8_t>((v[b] & 15) | ((h[b] >> k) & 1) << 4);
            c[16 + 4 * k + b] = static_cast<uint8_t>((v[b] >> 4) | ((h[b] >> (4 + k)) & 1) << 4);
          } else {
            c[4 * k + b] = v[b] & 63;
            c[16 + 4 * k + b] = static_cast<uint8_t>(((n[b] >> (4 * (k % 2))) & 15) | (v[b] >> 6) << 4);
          }
        }
      }
      OrKBlockCodes(kquant, c, i, blk);
    }
    if (kquant == 2) {
      std::memcpy(blk + offsetof(BlockQ2_K, d), unit + Panel16KQuantGeometry::D() + 2 * lane, 2);
      std::memcpy(blk + offsetof(BlockQ2_K, dmin), unit + Panel16KQuantGeometry::Dmin() + 2 * lane, 2);
      for (int s = 0; s < 16; ++s) blk[offsetof(BlockQ2_K, scales) + s] = unit[g.ScaleByte(s, lane)];
    } else if (kquant == 3) {
      std::memcpy(blk + offsetof(BlockQ3_K, d), unit + Panel16KQuantGeometry::D() + 2 * lane, 2);
      uint8_t* s12 = blk + offsetof(BlockQ3_K, scales);
      for (int s = 0; s < 16; ++s) {
        const int u = static_cast<int8_t>(unit[g.ScaleByte(s, lane)]) + 32;  // 0..63
        s12[s % 8] |= static_cast<uint8_t>((u & 15) << (s < 8 ? 0 : 4));
        s12[8 + s % 4] |= static_cast<uint8_t>((u >> 4) << (2 * (s / 4)));
      }
    } else if (kquant == kKQuantIQ4_XS) {
      BlockIQ4_XS x;
      std::memcpy(&x, blk, offsetof(BlockIQ4_XS, qs));
      std::memcpy(&x.d, unit + Panel16KQuantGeometry::D() + 2 * lane, 2);
      x.scales_h = 0;
      std::memset(x.scales_l, 0, sizeof(x.scales_l));
      for (int j = 0; j < 8; ++j) OrIQ4XSScale(static_cast<int8_t>(unit[g.Scales(j) + lane]), j, &x);
      std::memcpy(blk, &x, offsetof(BlockIQ4_XS, qs));
    } else if (kquant != 6) {
      BlockQ4_K k;  // Q5_K's d, dmin and scales sit where Q4_K's do
      std::memcpy(&k, blk, offsetof(BlockQ4_K, qs));
      std::memcpy(&k.d, unit + Panel16KQuantGeometry::D() + 2 * lane, 2);
      std::memcpy(&k.dmin, unit + Panel16KQuantGeometry::Dmin() + 2 * lane, 2);
      std::memset(k.scales, 0, sizeof(k.scales));
      for (int j = 0; j < 8; ++j) {
        const int sc = unit[g.Scales(j) + lane], m = unit[g.Mins(j) + lane];
        if (j < 4) {
          k.scales[j] |= static_cast<uint8_t>(sc & 63);
          k.scales[j + 4] |= static_cast<uint8_t>(m & 63);
        } else {
          k.scales[j + 4] = static_cast<uint8_t>((sc & 15) | (m & 15) << 4);
          k.scales[j - 4] |= static_cast<uint8_t>((sc >> 4) << 6);
          k.scales[j] |= static_cast<uint8_t>((m >> 4) << 6);
        }
      }
      std::memcpy(blk, &k, offsetof(BlockQ4_K, qs));
    } else {
      std::memcpy(blk + offsetof(BlockQ6_K, d), unit + Panel16KQuantGeometry::D() + 2 * lane, 2);
      for (int j = 0; j < 16; ++j) blk[offsetof(BlockQ6_K, scales) + j] = unit[g.Scales(j) + lane];
    }
  }
}

void GemmQ8HalfBias(const GemvQ8Input& in, int64_t cols, int32_t* half_bias) {
  for (int64_t b = 0; b < cols / kQuantBlock; ++b) {
    const int8_t* x = in.q + (b / 4) * 128 + 16 * (b % 4);
    for (int h = 0; h < 2; ++h) {
      int32_t sum = 0;
      for (int j = 0; j < 16; ++j) sum += x[64 * h + j];
      half_bias[2 * b + h] = -32 * sum;
    }
  }
}

namespace {

// k-quants: exact integer dots per 32-block (Q4_K) or 16-element half (Q6_K), scales in double.
void KQuantReference(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  const Panel16KQuantGeometry g(a.cols, a.kquant);
  const int64_t bb = KBlockBytes(a.kquant);
  std::vector<uint8_t> row(g.units * bb);
  for (int64_t r = row_begin; r < row_end; ++r) {
    UnpackGemvPanel16KQuantRow(a.kquant, a.w, a.cols, r, row.data());
    for (int64_t t = 0; t < a.n; ++t) {
      const int8_t* xq = a.xq + t * a.xq_stride;
      const float* bscale = a.block_scale + t * a.block_stride;
      double sum = 0;
      for (int64_t b = 0; b < a.cols / kQuantBlock; ++b) {
        const uint8_t* blk = row.data() + (b / 8) * bb;
        const int i = static_cast<int>(b % 8);
        uint8_t c[kQuantBlock];
        KBlockCodes(a.kquant, blk, i, c);
        int64_t dot[2] = {0, 0}, xsum = 0, hsum[2] = {0, 0};
        for (int j = 0; j < kQuantBlock; ++j) {
          const int x = xq[(b / 4) * 128 + 16 * (b % 4) + (j < 16 ? j : 64 + j - 16)];  // Q4_0 input layout
          const int q = a.kquant == 6               ? c[j] - 32
                        : a.kquant == 3             ? c[j] - 4
                        : a.kquant == kKQuantIQ4_XS ? kIQ4NLValues[c[j]]
                                                    : c[j];
          dot[j / 16] += int64_t{q} * x;
          xsum += x;
          hsum[j / 16] += x;
        }
        if (a.kquant == 2) {
          BlockQ2_K k;
          std::memcpy(&k, blk, sizeof(k));
          double part = 0;
          for (int h = 0; h < 2; ++h) {
            const uint8_t sm = k.scales[2 * i + h];
            part += double{HalfToFloat(k.d)} * (sm & 15) * static_cast<double>(dot[h]) -
                    double{HalfToFloat(k.dmin)} * (sm >> 4) * static_cast<double>(hsum[h]);
          }
          sum += part * bscale[b];
        } else if (a.kquant == 3) {
          uint16_t d;
          std::memcpy(&d, blk + offsetof(BlockQ3_K, d), 2);
          const uint8_t* s12 = blk + offsetof(BlockQ3_K, scales);
          double halves = 0;
          for (int h = 0; h < 2; ++h) {
            const int s = 2 * i + h;
            const int u = ((s12[s % 8] >> (s < 8 ? 0 : 4)) & 15) | ((s12[8 + s % 4] >> (2 * (s / 4))) & 3) << 4;
            halves += double{static_cast<double>(u - 32)} * static_cast<double>(dot[h]);
          }
          sum += double{HalfToFloat(d)} * bscale[b] * halves;
        } else if (a.kquant == kKQuantIQ4_XS) {
          BlockIQ4_XS x;
          std::memcpy(&x, blk, offsetof(BlockIQ4_XS, qs));
          sum += double{HalfToFloat(x.d)} * IQ4XSScale(x, i) * static_cast<double>(dot[0] + dot[1]) * bscale[b];
        } else if (a.kquant != 6) {
          BlockQ4_K k;
          std::memcpy(&k, blk, offsetof(BlockQ4_K, qs));
          int sc, m;
          KQuantScaleMin(k.scales, i, &sc, &m);
          sum += (double{HalfToFloat(k.d)} * sc * static_cast<double>(dot[0] + dot[1]) -
                  double{HalfToFloat(k.dmin)} * m * static_cast<double>(xsum)) * bscale[b];
        } else {
          uint16_t d;
          std::memcpy(&d, blk + offsetof(BlockQ6_K, d), 2);
          const auto* sc = reinterpret_cast<const int8_t*>(blk + offsetof(BlockQ6_K, scales));
          const double halves = double{sc[2 * i]} * static_cast<double>(dot[0]) +
                                double{sc[2 * i + 1]} * static_cast<double>(dot[1]);
          sum += double{HalfToFloat(d)} * bscale[b] * halves;
        }
      }
      a.y[t * a.ldy + r] = static_cast<float>(sum);
    }
  }
}

}  // namespace

int64_t GemvPanel16Q5Bytes(int64_t rows, int64_t cols, bool mins) {
  const Panel16GroupGeometry g(cols, kQuantBlock, false, 5, mins);
  return (rows + kPanelRows - 1) / kPanelRows * g.panel_bytes();
}

void PackGemvPanel16Q5(const void* w, int64_t rows, int64_t cols, bool mins, void* out) {
  const Panel16GroupGeometry g(cols, kQuantBlock, false, 5, mins);
  auto* dst = static_cast<uint8_t*>(out);
  std::memset(dst, 0, GemvPanel16Q5Bytes(rows, cols, mins));
  const int64_t bb = mins ? 24 : 22, nb = cols / kQuantBlock;
  for (int64_t r = 0; r < rows; ++r) {
    const int lane = static_cast<int>(r % kPanelRows);
    for (int64_t b = 0; b < nb; ++b) {
      const uint8_t* blk = static_cast<const uint8_t*>(w) + (r * nb + b) * bb;
      const uint8_t* qh = blk + (mins ? 4 : 2);
      const uint8_t* qs = qh + 4;
      const int64_t unit = GroupUnit(g, r, b), i = b % g.groups_per_unit;
      uint8_t* h = dst + unit + g.Vector(i, 0) + 4 * lane;
      for (int k = 0; k < 4; ++k) {
        // Q5_0's nibbles are in Q4_0's order: qs bytes 4k..4k+3 are vector 1 + k's dword.
        std::memcpy(dst + unit + g.Vector(i, 1 + k) + 4 * lane, qs + 4 * k, 4);
        for (int j = 0; j < 4; ++j) {
          const int e0 = 4 * k + j, e1 = 16 + 4 * k + j;
          const int b0 = (qh[e0 / 8] >> (e0 % 8)) & 1, b1 = (qh[e1 / 8] >> (e1 % 8)) & 1;
          h[j] |= static_cast<uint8_t>(b0 << k | b1 << (4 + k));
        }
      }
      std::memcpy(dst + unit + Panel16GroupGeometry::Scales(i) + 2 * lane, blk, 2);
      if (mins) std::memcpy(dst + unit + g.Mins(i) + 2 * lane, blk + 2, 2);
    }
  }
}

void UnpackGemvPanel16Q5Row(const void* packed, int64_t cols, bool mins, int64_t r, void* row_out) {
  const Panel16GroupGeometry g(cols, kQuantBlock, false, 5, mins);
  const auto* src = static_cast<const uint8_t*>(packed);
  const int lane = static_cast<int>(r % kPanelRows);
  const int64_t bb = mins ? 24 : 22;
  for (int64_t b = 0; b < cols / kQuantBlock; ++b) {
    uint8_t* blk = static_cast<uint8_t*>(row_out) + b * bb;
    std::memset(blk, 0, bb);
    uint8_t* qh = blk + (mins ? 4 : 2);
    uint8_t* qs = qh + 4;
    const int64_t unit = GroupUnit(g, r, b), i = b % g.groups_per_unit;
    const uint8_t* h = src + unit + g.Vector(i, 0) + 4 * lane;
    for (int k = 0; k < 4; ++k) {
      std::memcpy(qs + 4 * k, src + unit + g.Vector(i, 1 + k) + 4 * lane, 4);
      for (int j = 0; j < 4; ++j) {
        const int e0 = 4 * k + j, e1 = 16 + 4 * k + j;
        qh[e0 / 8] |= static_cast<uint8_t>(((h[j] >> k) & 1) << (e0 % 8));
        qh[e1 / 8] |= static_cast<uint8_t>(((h[j] >> (4 + k)) & 1) << (e1 % 8));
      }
    }
    std::memcpy(blk, src + unit + Panel16GroupGeometry::Scales(i) + 2 * lane, 2);
    if (mins) std::memcpy(blk + 2, src + unit + g.Mins(i) + 2 * lane, 2);
  }
}

void tessel_group_panel16_q8_gemm__reference(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  if (a.kquant != 0) return KQuantReference(a, row_begin, row_end);
  // (code - zero) * x_q per 32-block, exact in integers; the group scale times the block's dx in double;
  // Q4_1 (group_mins): code * x_q, plus the min times the block's dx times sum(x_q).
  const Panel16GroupGeometry g(a.cols, a.group_size, a.asymmetric, a.group_bits, a.group_mins);
  const auto* w = static_cast<const uint8_t*>(a.w);
  for (int64_t t = 0; t < a.n; ++t) {
    const int8_t* xq = a.xq + t * a.xq_stride;
    const float* bscale = a.block_scale + t * a.block_stride;
    for (int64_t r = row_begin; r < row_end; ++r) {
      const int lane = static_cast<int>(r % kPanelRows);
      double sum = 0;
      for (int64_t b = 0; b < a.cols / kQuantBlock; ++b) {
        const int64_t gg = b * kQuantBlock / a.group_size;
        const int64_t unit = GroupUnit(g, r, gg), i = gg % g.groups_per_unit;
        const int zero = a.group_mins ? 0 : a.asymmetric ? w[unit + g.Zeros(i) + lane] : 1 << (a.group_bits - 1);
        int64_t dot = 0, xsum = 0;
        for (int j = 0; j < kQuantBlock; ++j) {
          const int code = GetPanelCode(g, a.group_bits, w, r, b * kQuantBlock + j);
          const int x = xq[(b / 4) * 128 + 16 * (b % 4) + (j < 16 ? j : 64 + j - 16)];  // Q4_0 input layout
          dot += int64_t{code - zero} * x;
          xsum += x;
        }
        uint16_t d;
        std::memcpy(&d, w + unit + Panel16GroupGeometry::Scales(i) + 2 * lane, 2);
        sum += static_cast<double>(HalfToFloat(d)) * bscale[b] * static_cast<double>(dot);
        if (a.group_mins) {
          uint16_t m;
          std::memcpy(&m, w + unit + g.Mins(i) + 2 * lane, 2);
          sum += static_cast<double>(HalfToFloat(m)) * bscale[b] * static_cast<double>(xsum);
        }
      }
      a.y[t * a.ldy + r] = static_cast<float>(sum);
    }
  }
}

void tessel_q4_0_panel16_q8_gemm__reference(const GemmQ8Args& args, int64_t row_begin, int64_t row_end) {
  Panel16Reference(GemvFormat::kQ4_0, args, row_begin, row_end);
}

void tessel_q8_0_panel16_q8_gemm__reference(const GemmQ8Args& args, int64_t row_begin, int64_t row_end) {
  Panel16Reference(GemvFormat::kQ8_0, args, row_begin, row_end);
}

}  // namespace tessel
