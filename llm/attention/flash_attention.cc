// Flash attention: tasks are (KV head, tile of queries); each task streams its key range tile by
// tile with running max / sum / accumulator per (query, head) row.
#include "llm/attention/flash_attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "llm/base/fp16.h"

namespace tessel::llm {
namespace {

constexpr int kQT = AttentionScratch::kQueryTile;
constexpr int kKT = AttentionScratch::kKeyTile;
// Multiply-adds below which waking the thread pool costs more than it saves.
constexpr int64_t kMinParallelWork = 1 << 16;

size_t ScratchFloats(const AttentionParams& p) {
  const size_t rows = static_cast<size_t>(kQT) * (p.num_heads / p.num_kv_heads);
  // K and V tiles (converted to f32), and per row: max, sum, accumulator, scores.
  return 2 * kKT * p.head_dim + rows * (2 + p.head_dim + kKT);
}

// Dot product with 8 independent lanes, so that it vectorizes without reassociation.
inline __attribute__((always_inline)) float Dot(const float* a, const float* b, int n) {
  float acc[8] = {};
  int e = 0;
  for (; e + 8 <= n; e += 8) {
    for (int j = 0; j < 8; ++j) acc[j] += a[e + j] * b[e + j];
  }
  float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; e < n; ++e) s += a[e] * b[e];
  return s;
}

// Copies keys or values [j0, j0 + c) of one head (contiguous within a block) into f32.
inline __attribute__((always_inline)) const float* LoadTile(const KvView& kv, const void* base, int64_t j0, int c, int head, float* tmp) {
  const int64_t off = kv.Offset(j0, head);
  if (kv.dtype == KvDType::kF32) return static_cast<const float*>(base) + off;
  const uint16_t* src = static_cast<const uint16_t*>(base) + off;
  for (int64_t e = 0; e < static_cast<int64_t>(c) * kv.head_dim; ++e) tmp[e] = HalfToFloat(src[e]);
  return tmp;
}

// Compiled for each x86 vector width and picked at load time (GCC function multiversioning): the dot
// products, the accumulator updates and the f16 conversion of the cache tiles vectorize 16 wide with
// AVX-512 instead of the baseline's 4.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void AttendTile(const AttentionParams& p, const float* q, int64_t n, int64_t pos0, const KvView& kv, float* out,
                int kv_head, int64_t i0, float* scratch) {
  const int hd = p.head_dim;
  const int group = p.num_heads / p.num_kv_heads;
  const int64_t i1 = std::min<int64_t>(n, i0 + kQT);
  const int rows = static_cast<int>(i1 - i0) * group;
  float* k_tmp = scratch;
  float* v_tmp = k_tmp + kKT * hd;
  float* m = v_tmp + kKT * hd;
  float* l = m + rows;
  float* acc = l + rows;
  float* s = acc + static_cast<size_t>(rows) * hd;
  for (int r = 0; r < rows; ++r) {
    m[r] = -std::numeric_limits<float>::infinity();
    l[r] = 0.0f;
  }
  std::memset(acc, 0, sizeof(float) * rows * hd);

  const int64_t last = pos0 + i1 - 1;  // the newest position any row sees
  int64_t first = 0;
  if (p.sliding_window > 0) first = std::max<int64_t>(0, pos0 + i0 - p.sliding_window + 1);
  for (int64_t j0 = first; j0 <= last;) {
    // A tile never crosses a cache block, so each head's keys in it are contiguous.
    const int64_t block_end = (j0 / kv.block_size + 1) * kv.block_size;
    const int c = static_cast<int>(std::min<int64_t>({kKT, last + 1 - j0, block_end - j0}));
    const float* kt = LoadTile(kv, kv.k_base, j0, c, kv_head, k_tmp);
    const float* vt = LoadTile(kv, kv.v_base, j0, c, kv_head, v_tmp);
    for (int r = 0; r < rows; ++r) {
      const int64_t i = i0 + r / group;
      const int head = kv_head * group + r % group;
      const int64_t pos = pos0 + i;
      const int64_t lo = p.sliding_window > 0 ? pos - p.sliding_window + 1 : 0;
      const float* qr = q + (i * p.num_heads + head) * hd;
      float* sr = s + r * kKT;
      float tile_max = -std::numeric_limits<float>::infinity();
      for (int jj = 0; jj < c; ++jj) {
        const int64_t j = j0 + jj;
        if (j > pos || j < lo) {
          sr[jj] = -std::numeric_limits<float>::infinity();
          continue;
        }
        sr[jj] = Dot(qr, kt + static_cast<int64_t>(jj) * hd, hd) * p.scale;
        tile_max = std::max(tile_max, sr[jj]);
      }
      if (tile_max == -std::numeric_limits<float>::infinity()) continue;  // nothing visible here
      const float m_new = std::max(m[r], tile_max);
      const float correction = std::exp(m[r] - m_new);  // 0 for the first visible tile
      float* ar = acc + static_cast<int64_t>(r) * hd;
      float sum = 0.0f;
      for (int e = 0; e < hd; ++e) ar[e] *= correction;
      for (int jj = 0; jj < c; ++jj) {
        if (sr[jj] == -std::numeric_limits<float>::infinity()) continue;
        const float pj = std::exp(sr[jj] - m_new);
        sum += pj;
        const float* vj = vt + static_cast<int64_t>(jj) * hd;
        for (int e = 0; e < hd; ++e) ar[e] += pj * vj[e];
      }
      l[r] = l[r] * correction + sum;
      m[r] = m_new;
    }
    j0 += c;
  }
  for (int r = 0; r < rows; ++r) {
    const int64_t i = i0 + r / group;
    const int head = kv_head * group + r % group;
    float* o = out + (i * p.num_heads + head) * hd;
    const float inv = 1.0f / l[r];  // every query sees at least itself
    for (int e = 0; e < hd; ++e) o[e] = acc[static_cast<int64_t>(r) * hd + e] * inv;
  }
}

}  // namespace

AttentionScratch::AttentionScratch(const AttentionParams& params, int num_threads) {
  const size_t floats = ScratchFloats(params);
  for (int t = 0; t < num_threads; ++t) buffers_.emplace_back(new float[floats]);
}

void FlashAttention(const AttentionParams& p, const float* q, int64_t n, int64_t pos0, const KvView& kv, float* out,
                    ThreadPool* pool, AttentionScratch* scratch) {
  const int64_t query_tiles = (n + kQT - 1) / kQT;
  auto task = [&](int64_t t, int thread) {
    const int kv_head = static_cast<int>(t % p.num_kv_heads);
    const int64_t i0 = (t / p.num_kv_heads) * kQT;
    AttendTile(p, q, n, pos0, kv, out, kv_head, i0, scratch->Get(thread));
  };
  // Short attention (decode early in a sequence) stays on the calling thread: see kMinParallelWork.
  const int64_t work = n * (pos0 + n) * p.num_heads * p.head_dim;
  if (work < kMinParallelWork) {
    for (int64_t t = 0; t < query_tiles * p.num_kv_heads; ++t) task(t, 0);
  } else {
    pool->Run(query_tiles * p.num_kv_heads, task);
  }
}

}  // namespace tessel::llm
