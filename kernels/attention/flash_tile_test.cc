// Every registered flash-attention tile kernel that this CPU runs, on hand-built paged KV views (f32 and
// f16 storage, a shuffled block table, grouped query heads, causal and sliding-window masks), against
// softmax attention computed directly in double from the same stored keys and values.
// Tolerance: 2e-5 x (1 + max |value|) per output (float accumulation and the online softmax's rescaling).
#include "kernels/attention/flash_tile.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "support/fp16.h"

namespace tessel {
namespace {

struct Case {
  KvDType dtype;
  int head_dim;
  int block_size;
  int64_t n;     // queries
  int64_t pos0;  // position of the first query
  int window;
};

TEST(FlashTileTest, EveryKernelMatchesDoubleAttention) {
  const std::vector<Case> cases = {
      {KvDType::kF32, 64, 16, 5, 40, 0},   {KvDType::kF16, 64, 16, 19, 13, 0}, {KvDType::kF32, 32, 32, 3, 70, 24},
      {KvDType::kF16, 128, 16, 1, 90, 0},  {KvDType::kF32, 48, 8, 7, 20, 0},  // the generic kernel's shape only
  };
  int checked = 0;
  for (const Case& c : cases) {
    AttentionParams p;
    p.num_heads = 4;
    p.num_kv_heads = 2;
    p.head_dim = c.head_dim;
    p.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
    p.sliding_window = c.window;
    const int64_t ctx = c.pos0 + c.n;
    const int blocks = static_cast<int>((ctx + c.block_size - 1) / c.block_size);
    std::mt19937 rng(c.head_dim * 131 + c.block_size + static_cast<int>(c.n));
    std::normal_distribution<float> dist(0.0f, 1.0f);
    // Physical blocks in a shuffled order, as a paged cache hands them out.
    std::vector<int32_t> table(blocks);
    std::iota(table.begin(), table.end(), 0);
    std::shuffle(table.begin(), table.end(), rng);
    KvView kv;
    kv.dtype = c.dtype;
    kv.block_size = c.block_size;
    kv.num_kv_heads = p.num_kv_heads;
    kv.head_dim = c.head_dim;
    kv.block_table = table.data();
    const size_t elems = static_cast<size_t>(blocks) * p.num_kv_heads * c.block_size * c.head_dim;
    std::vector<float> kf(elems), vf(elems);
    std::vector<uint16_t> kh(elems), vh(elems);
    for (size_t i = 0; i < elems; ++i) {
      kh[i] = FloatToHalf(dist(rng));
      vh[i] = FloatToHalf(dist(rng));
      kf[i] = c.dtype == KvDType::kF16 ? HalfToFloat(kh[i]) : dist(rng);
      vf[i] = c.dtype == KvDType::kF16 ? HalfToFloat(vh[i]) : dist(rng);
    }
    kv.k_base = c.dtype == KvDType::kF16 ? static_cast<const void*>(kh.data()) : kf.data();
    kv.v_base = c.dtype == KvDType::kF16 ? static_cast<const void*>(vh.data()) : vf.data();
    std::vector<float> q(c.n * p.num_heads * c.head_dim);
    for (float& v : q) v = dist(rng);

    // The reference: every query head against every key it may see, in double.
    std::vector<double> want(q.size());
    double vmax = 0;
    for (int64_t i = 0; i < c.n; ++i) {
      const int64_t pos = c.pos0 + i;
      const int64_t lo = c.window > 0 ? std::max<int64_t>(0, pos - c.window + 1) : 0;
      for (int h = 0; h < p.num_heads; ++h) {
        const int g = h / (p.num_heads / p.num_kv_heads);
        std::vector<double> s;
        for (int64_t j = lo; j <= pos; ++j) {
          double d = 0;
          for (int e = 0; e < c.head_dim; ++e) d += double(q[(i * p.num_heads + h) * c.head_dim + e]) * kf[kv.KeyOffset(j, g, e)];
          s.push_back(d * p.scale);
        }
        const double m = *std::max_element(s.begin(), s.end());
        double sum = 0;
        for (double& x : s) sum += (x = std::exp(x - m));
        for (int e = 0; e < c.head_dim; ++e) {
          double o = 0;
          for (int64_t j = lo; j <= pos; ++j) o += s[j - lo] / sum * vf[kv.ValueOffset(j, g) + e];
          want[(i * p.num_heads + h) * c.head_dim + e] = o;
        }
      }
    }
    for (float v : vf) vmax = std::max(vmax, std::fabs(double(v)));

    std::vector<float> scratch(FlashScratchFloats(p));
    for (const FlashTileKernel& k : FlashTileKernels().entries()) {
      if (!CpuSupports(k.isa) || (k.legal && !k.legal({c.head_dim, c.block_size, 0, 0}))) continue;
      std::vector<float> out(q.size(), -7.0f);
      for (int kvh = 0; kvh < p.num_kv_heads; ++kvh) {
        for (int64_t i0 = 0; i0 < c.n; i0 += kFlashQueryTile) {
          k.fn(p, q.data(), c.n, c.pos0, kv, out.data(), kvh, i0, scratch.data());
        }
      }
      double err = 0;
      for (size_t i = 0; i < out.size(); ++i) err = std::max(err, std::fabs(out[i] - want[i]));
      EXPECT_LE(err, 2e-5 * (1 + vmax)) << k.name << " head_dim " << c.head_dim << " block " << c.block_size
                                        << " n " << c.n << " pos0 " << c.pos0 << " window " << c.window;
      ++checked;
    }
  }
  EXPECT_GE(checked, 5);  // at least the generic kernel on every case
}

}  // namespace
}  // namespace tessel
