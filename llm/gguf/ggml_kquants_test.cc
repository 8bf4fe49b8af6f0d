// ggml's k-quants (Q4_K, Q5_K, Q6_K) and Q5_0 / Q5_1: DequantizeRow against an element-by-element
// reading of the block layout written from ggml-common.h's description (sharing no code with
// ggml_types.cc's loops), on random blocks; QuantizeRow's round trip against the step sizes; the scale
// packing.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "support/fp16.h"
#include "llm/gguf/ggml_types.h"

namespace tessel::llm {
namespace {

// The 6-bit scale (what = 0) or min (what = 1) of Q4_K / Q5_K sub-block j, read bit by bit: 12 bytes
// = 4 bytes of scales, 4 of mins (low 6 bits, and in their top 2 bits the high bits of sub-blocks
// 4..7), 4 bytes of low nibbles (scale | min << 4) for sub-blocks 4..7.
int SixBits(const uint8_t* s, int j, int what) {
  if (j < 4) return s[4 * what + j] % 64;
  const int low = what == 0 ? s[8 + j - 4] % 16 : s[8 + j - 4] / 16;
  const int high = s[4 * what + j - 4] / 64;
  return low + 16 * high;
}

float Q4KElement(const BlockQ4_K& b, int e, bool five_bits, const uint8_t* qh) {
  const int j = e / 32, c = e / 64, l = e % 32;
  const bool upper = e % 64 >= 32;
  int q = upper ? b.qs[32 * c + l] / 16 : b.qs[32 * c + l] % 16;
  if (five_bits) q += 16 * ((qh[l] >> (2 * c + (upper ? 1 : 0))) & 1);
  const float d = HalfToFloat(b.d) * SixBits(b.scales, j, 0);
  const float m = HalfToFloat(b.dmin) * SixBits(b.scales, j, 1);
  return d * q - m;
}

float Q6KElement(const BlockQ6_K& b, int e) {
  const int h = e / 128, k = (e % 128) / 32, l = e % 32;
  const uint8_t low_byte = b.ql[64 * h + 32 * (k % 2) + l];
  const int low = k < 2 ? low_byte % 16 : low_byte / 16;
  const int high = (b.qh[32 * h + l] >> (2 * k)) % 4;
  const int scale = b.scales[8 * h + 2 * k + l / 16];
  return HalfToFloat(b.d) * scale * (low + 16 * high - 32);
}

// Random bytes everywhere but the fp16 super-block scales, which get ordinary magnitudes.
template <typename Block>
std::vector<Block> RandomBlocks(int n, std::mt19937* rng) {
  std::vector<Block> blocks(n);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(1e-4f, 1e-2f);
  for (Block& b : blocks) {
    auto* p = reinterpret_cast<uint8_t*>(&b);
    for (size_t i = 0; i < sizeof(Block); ++i) p[i] = static_cast<uint8_t>(byte(*rng));
    b.d = FloatToHalf(scale(*rng));
    if constexpr (!std::is_same_v<Block, BlockQ6_K> && !std::is_same_v<Block, BlockQ3_K> &&
                  !std::is_same_v<Block, BlockIQ4_NL> && !std::is_same_v<Block, BlockIQ4_XS>) {
      b.dmin = FloatToHalf(scale(*rng));
    }
  }
  return blocks;
}

// DequantizeRow of `blocks` (of `block_elems` elements each) equals element(block, e) everywhere.
template <typename Block, typename Element>
void ExpectDequantizes(GgmlType t, const std::vector<Block>& blocks, int block_elems, Element element) {
  const int n = static_cast<int>(blocks.size()) * block_elems;
  std::vector<float> got(n);
  DequantizeRow(t, blocks.data(), got.data(), n);
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(got[i], element(blocks[i / block_elems], i % block_elems)) << GgmlTypeName(t) << " element " << i;
  }
}

TEST(GgmlKQuantsTest, DequantizeMatchesTheLayout) {
  std::mt19937 rng(7);
  constexpr int kBlocks = 6;
  ExpectDequantizes(GgmlType::kQ4_K, RandomBlocks<BlockQ4_K>(kBlocks, &rng), kSuperBlock,
                    [](const BlockQ4_K& b, int e) { return Q4KElement(b, e, false, nullptr); });
  ExpectDequantizes(GgmlType::kQ5_K, RandomBlocks<BlockQ5_K>(kBlocks, &rng), kSuperBlock,
                    [](const BlockQ5_K& b, int e) {
                      BlockQ4_K as4;
                      as4.d = b.d;
                      as4.dmin = b.dmin;
                      std::memcpy(as4.scales, b.scales, sizeof(as4.scales));
                      std::memcpy(as4.qs, b.qs, sizeof(as4.qs));
                      return Q4KElement(as4, e, true, b.qh);
                    });
  ExpectDequantizes(GgmlType::kQ6_K, RandomBlocks<BlockQ6_K>(kBlocks, &rng), kSuperBlock, Q6KElement);
}

// Q5_0 / Q5_1 element e of a block: its low nibble from qs[e % 16] (low nibble for e < 16), its fifth
// bit from bit e of the 32-bit little-endian qh.
TEST(GgmlKQuantsTest, Q5BlocksMatchTheLayout) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> byte(0, 255);
  for (GgmlType t : {GgmlType::kQ5_0, GgmlType::kQ5_1}) {
    const bool q5_1 = t == GgmlType::kQ5_1;
    const int bb = q5_1 ? 24 : 22, blocks = 9;
    std::vector<uint8_t> raw(blocks * bb);
    for (uint8_t& v : raw) v = static_cast<uint8_t>(byte(rng));
    for (int b = 0; b < blocks; ++b) {
      const uint16_t d = FloatToHalf(0.01f * (1 + b)), m = FloatToHalf(-0.05f * b);
      std::memcpy(&raw[b * bb], &d, 2);
      if (q5_1) std::memcpy(&raw[b * bb + 2], &m, 2);
    }
    std::vector<float> got(blocks * 32);
    DequantizeRow(t, raw.data(), got.data(), blocks * 32);
    for (int i = 0; i < blocks * 32; ++i) {
      const uint8_t* blk = &raw[(i / 32) * bb];
      const int e = i % 32;
      const uint8_t* qh = blk + (q5_1 ? 4 : 2);
      const uint8_t* qs = qh + 4;
      const int low = e < 16 ? qs[e] % 16 : qs[e - 16] / 16;
      const int q = low + 16 * ((qh[e / 8] >> (e % 8)) & 1);
      uint16_t dh, mh = 0;
      std::memcpy(&dh, blk, 2);
      if (q5_1) std::memcpy(&mh, blk + 2, 2);
      const float want = q5_1 ? q * HalfToFloat(dh) + HalfToFloat(mh) : (q - 16) * HalfToFloat(dh);
      ASSERT_EQ(got[i], want) << GgmlTypeName(t) << " element " << i;
    }
  }
}

// Q2_K / Q3_K element e of a super-block: n = e / 128, j = (e % 128) / 32, l = e % 32; 2 bits at 2j of
// qs[32n + l]; sub-block s = e / 16.
float Q2KElement(const BlockQ2_K& b, int e) {
  const int n = e / 128, j = (e % 128) / 32, l = e % 32, s = e / 16;
  const int q = (b.qs[32 * n + l] >> (2 * j)) % 4;
  return HalfToFloat(b.d) * (b.scales[s] % 16) * q - HalfToFloat(b.dmin) * (b.scales[s] / 16);
}

float Q3KElement(const BlockQ3_K& b, int e) {
  const int n = e / 128, j = (e % 128) / 32, l = e % 32, s = e / 16;
  const int low = (b.qs[32 * n + l] >> (2 * j)) % 4;
  const bool third = (b.hmask[l] >> (4 * n + j)) % 2 == 1;
  const int scale_low = s < 8 ? b.scales[s] % 16 : b.scales[s - 8] / 16;
  const int scale_high = (b.scales[8 + s % 4] >> (2 * (s / 4))) % 4;
  return HalfToFloat(b.d) * (scale_low + 16 * scale_high - 32) * (low - (third ? 0 : 4));
}

TEST(GgmlKQuantsTest, Q2KAndQ3KMatchTheLayout) {
  std::mt19937 rng(9);
  ExpectDequantizes(GgmlType::kQ2_K, RandomBlocks<BlockQ2_K>(5, &rng), kSuperBlock, Q2KElement);
  ExpectDequantizes(GgmlType::kQ3_K, RandomBlocks<BlockQ3_K>(5, &rng), kSuperBlock, Q3KElement);
}

// ||back - x|| / ||x|| over n elements.
double RelativeRms(const float* x, const float* back, int64_t n) {
  double err = 0, norm = 0;
  for (int64_t i = 0; i < n; ++i) {
    err += (back[i] - x[i]) * double{back[i] - x[i]};
    norm += x[i] * double{x[i]};
  }
  return std::sqrt(err / norm);
}

// IQ4_NL / IQ4_XS element e: the level table of ggml-common.h's kvalues_iq4nl, typed in again here.
constexpr int kLevels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

int NibbleOf(const uint8_t* qs, int e) { return e < 16 ? qs[e] % 16 : qs[e - 16] / 16; }

// IQ4_XS: sub-block j = e / 32 has 4 low scale bits in byte j / 2 of scales_l (high nibble for odd j)
// and 2 high bits at bit 2j of the little-endian scales_h.
float IQ4XSElement(const BlockIQ4_XS& b, int e) {
  const int j = e / 32;
  const int low = j % 2 == 0 ? b.scales_l[j / 2] % 16 : b.scales_l[j / 2] / 16;
  const int high = (b.scales_h / (1 << (2 * j))) % 4;
  return HalfToFloat(b.d) * (low + 16 * high - 32) * kLevels[NibbleOf(b.qs + 16 * j, e % 32)];
}

TEST(GgmlKQuantsTest, IQ4BlocksMatchTheLayout) {
  std::mt19937 rng(13);
  ExpectDequantizes(GgmlType::kIQ4_XS, RandomBlocks<BlockIQ4_XS>(5, &rng), kSuperBlock, IQ4XSElement);
  ExpectDequantizes(GgmlType::kIQ4_NL, RandomBlocks<BlockIQ4_NL>(40, &rng), kQuantBlock,
                    [](const BlockIQ4_NL& b, int e) { return HalfToFloat(b.d) * kLevels[NibbleOf(b.qs, e)]; });
}

// The point of the non-linear levels: on normally distributed weights IQ4_NL's error is below Q4_0's at
// the same 4.5 bits per weight; IQ4_XS at 4.25 bits stays within 10% of Q4_K's at 4.5 (ggml's Q4_K scale
// and min search: 0.0715 against IQ4_XS's 0.0771 without an importance matrix).
TEST(GgmlKQuantsTest, IQ4BeatsUniformLevelsOnGaussianWeights) {
  std::mt19937 rng(17);
  std::normal_distribution<float> g(0.0f, 0.02f);
  constexpr int n = 64 * kSuperBlock;
  std::vector<float> x(n), back(n);
  for (float& v : x) v = g(rng);
  auto rel_rms = [&](GgmlType t) {
    std::vector<uint8_t> q(GgmlRowBytes(t, n));
    QuantizeRow(t, x.data(), q.data(), n);
    DequantizeRow(t, q.data(), back.data(), n);
    const double rel = RelativeRms(x.data(), back.data(), n);
    std::printf("%s on Gaussian weights: relative RMS error %.4f\n", GgmlTypeName(t).data(), rel);
    return rel;
  };
  const double q4_0 = rel_rms(GgmlType::kQ4_0), iq4_nl = rel_rms(GgmlType::kIQ4_NL);
  const double q4_k = rel_rms(GgmlType::kQ4_K), iq4_xs = rel_rms(GgmlType::kIQ4_XS);
  EXPECT_LT(iq4_nl, 0.95 * q4_0);
  EXPECT_LT(iq4_xs, 1.1 * q4_k);
  EXPECT_LT(q4_k, 0.9 * q4_0);
  EXPECT_GT(iq4_xs, 1e-3);
}

TEST(GgmlKQuantsTest, ScaleBytesRoundTrip) {
  // Every 6-bit value in every sub-block position survives KQuantScaleMin's unpacking of bytes packed
  // by hand from the description above.
  for (int v = 0; v < 64; ++v) {
    uint8_t s[12] = {};
    for (int j = 0; j < 8; ++j) {
      const int sc = (v + j) % 64, m = (v + 3 * j + 1) % 64;
      if (j < 4) {
        s[j] |= sc;
        s[j + 4] |= m;
      } else {
        s[j + 4] = static_cast<uint8_t>(sc % 16 + 16 * (m % 16));
        s[j - 4] |= static_cast<uint8_t>((sc / 16) << 6);
        s[j] |= static_cast<uint8_t>((m / 16) << 6);
      }
    }
    for (int j = 0; j < 8; ++j) {
      int sc, m;
      KQuantScaleMin(s, j, &sc, &m);
      EXPECT_EQ(sc, (v + j) % 64);
      EXPECT_EQ(m, (v + 3 * j + 1) % 64);
      EXPECT_EQ(sc, SixBits(s, j, 0));
      EXPECT_EQ(m, SixBits(s, j, 1));
    }
  }
}

// Quantize, then dequantize: RMS error against the weights' RMS. Uniform weights on [-a, a] with a
// varying per sub-block; expected relative RMS error ~ step / sqrt(12) / (a / sqrt(3)) = 1 / nsteps for
// a full-range step: Q4_K 1/15, Q5_K and Q5_1 1/31, Q6_K and Q5_0 1/32, Q3_K 1/8, Q2_K 1/3 (plus the
// rounding of the k-quant scales).
TEST(GgmlKQuantsTest, QuantizeRoundTrip) {
  std::mt19937 rng(11);
  constexpr int rows = 16, cols = 4 * kSuperBlock;
  std::vector<float> x(rows * cols);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f), amp(0.2f, 1.0f);
  for (int i = 0; i < rows * cols; i += 16) {
    const float a = 0.05f * amp(rng);
    for (int j = 0; j < 16; ++j) x[i + j] = a * u(rng);
  }
  struct Case {
    GgmlType type;
    double max_rel_rms;
  };
  for (const Case& c : {Case{GgmlType::kQ4_K, 0.09}, Case{GgmlType::kQ5_K, 0.045}, Case{GgmlType::kQ6_K, 0.04},
                        Case{GgmlType::kQ5_0, 0.045}, Case{GgmlType::kQ5_1, 0.04}, Case{GgmlType::kQ3_K, 0.18},
                        Case{GgmlType::kQ2_K, 0.35}, Case{GgmlType::kIQ4_NL, 0.1}, Case{GgmlType::kIQ4_XS, 0.1}}) {
    std::vector<uint8_t> q(rows * GgmlRowBytes(c.type, cols));
    std::vector<float> back(rows * cols);
    for (int r = 0; r < rows; ++r) {
      uint8_t* row = q.data() + r * GgmlRowBytes(c.type, cols);
      QuantizeRow(c.type, &x[r * cols], row, cols);
      DequantizeRow(c.type, row, &back[r * cols], cols);
    }
    const double rel = RelativeRms(x.data(), back.data(), rows * cols);
    EXPECT_LT(rel, c.max_rel_rms) << GgmlTypeName(c.type);
    EXPECT_GT(rel, 1e-3) << GgmlTypeName(c.type) << ": suspiciously exact";
    std::printf("%s: relative RMS round-trip error %.4f\n", GgmlTypeName(c.type).data(), rel);
  }
}

TEST(GgmlKQuantsTest, ZeroBlocksStayZero) {
  std::vector<float> x(kSuperBlock, 0.0f), back(kSuperBlock, 1.0f);
  for (GgmlType t : {GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K, GgmlType::kQ5_0, GgmlType::kQ5_1,
                     GgmlType::kQ2_K, GgmlType::kQ3_K, GgmlType::kIQ4_NL, GgmlType::kIQ4_XS}) {
    std::vector<uint8_t> q(GgmlRowBytes(t, kSuperBlock));
    QuantizeRow(t, x.data(), q.data(), kSuperBlock);
    DequantizeRow(t, q.data(), back.data(), kSuperBlock);
    for (float v : back) ASSERT_EQ(v, 0.0f) << GgmlTypeName(t);
  }
}

}  // namespace
}  // namespace tessel::llm
