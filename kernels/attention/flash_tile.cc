// The portable flash-attention tiles: the generic reference twin (scalar loops, any head size and block
// size), the baseline copy of the vector kernel (internal/flash_tile_vec16.inc), and the family
// registry, which also holds the AVX2 and AVX-512 copies on x86.
#include "kernels/attention/flash_tile.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/registry/registry.h"
#include "support/fp16.h"

#include "kernels/attention/internal/flash_tile_vec16.inc"

namespace tessel {
namespace {

// The baseline copy of the vector kernel: software f16 widening on x86 (AVX-512 machines run
// flash_tile_avx512.cc), the fcvtl instruction on aarch64. Blocking for 16 registers of 16 floats:
// SSE and NEON hold a 16-float vector in four registers.
struct PortableOps {
  static constexpr int kScoreRows = 4;
  static constexpr int kColumnVectors = 2;
  static constexpr int kAccumulators = 4;
  static F32x16 LoadHalf(const uint16_t* p) {
#if defined(__aarch64__)
    typedef __fp16 HalfPart __attribute__((vector_size(kNativeBytes / 2)));
    F32x16 v;
    for (int i = 0; i < kParts; ++i) {
      HalfPart h;
      std::memcpy(&h, p + i * kPartLanes, sizeof(h));
      v.p[i] = __builtin_convertvector(h, NativeF);
    }
    return v;
#else
    return HalfToFloatBits(p);
#endif
  }
};

constexpr int kQT = kFlashQueryTile;
constexpr int kKT = kFlashKeyTile;

// Copies keys [j0, j0 + c) of one head into f32 as [head_dim][kKT] (the cache stores them as
// [head_dim][block_size]).
inline const float* LoadKeys(const KvView& kv, int64_t j0, int c, int head, float* tmp) {
  const int64_t off = kv.KeyOffset(j0, head, 0);
  for (int e = 0; e < kv.head_dim; ++e) {
    const int64_t src = off + static_cast<int64_t>(e) * kv.block_size;
    float* dst = tmp + static_cast<int64_t>(e) * kKT;
    if (kv.dtype == KvDType::kF32) {
      std::memcpy(dst, static_cast<const float*>(kv.k_base) + src, c * sizeof(float));
    } else {
      for (int jj = 0; jj < c; ++jj) dst[jj] = HalfToFloat(static_cast<const uint16_t*>(kv.k_base)[src + jj]);
    }
  }
  return tmp;
}

// Values [j0, j0 + c) of one head (contiguous within a block) in f32.
inline const float* LoadValues(const KvView& kv, int64_t j0, int c, int head, float* tmp) {
  const int64_t off = kv.ValueOffset(j0, head);
  if (kv.dtype == KvDType::kF32) return static_cast<const float*>(kv.v_base) + off;
  const uint16_t* src = static_cast<const uint16_t*>(kv.v_base) + off;
  for (int64_t e = 0; e < static_cast<int64_t>(c) * kv.head_dim; ++e) tmp[e] = HalfToFloat(src[e]);
  return tmp;
}

}  // namespace

size_t FlashScratchFloats(const AttentionParams& p) {
  const size_t rows = static_cast<size_t>(kQT) * (p.num_heads / p.num_kv_heads);
  // Generic: K and V tiles (converted to f32), and per row: max, sum, accumulator, scores.
  const size_t generic = 2 * kKT * p.head_dim + rows * (2 + p.head_dim + kKT);
  // Vector: per row max, sum, correction, scaled query, accumulator, probabilities.
  const size_t vector = rows * (3 + 2 * p.head_dim + kKT);
  return std::max(generic, vector);
}

void flash_tile__generic(const AttentionParams& p, const float* q, int64_t n, int64_t pos0, const KvView& kv,
                         float* out, int kv_head, int64_t i0, float* scratch) {
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
    const float* kt = LoadKeys(kv, j0, c, kv_head, k_tmp);
    const float* vt = LoadValues(kv, j0, c, kv_head, v_tmp);
    for (int r = 0; r < rows; ++r) {
      const int64_t i = i0 + r / group;
      const int head = kv_head * group + r % group;
      const int64_t pos = pos0 + i;
      const int64_t lo = p.sliding_window > 0 ? pos - p.sliding_window + 1 : 0;
      const float* qr = q + (i * p.num_heads + head) * hd;
      float* sr = s + r * kKT;
      for (int jj = 0; jj < c; ++jj) sr[jj] = 0.0f;
      for (int e = 0; e < hd; ++e) {
        for (int jj = 0; jj < c; ++jj) sr[jj] += qr[e] * kt[e * kKT + jj];
      }
      float tile_max = -std::numeric_limits<float>::infinity();
      for (int jj = 0; jj < c; ++jj) {
        const int64_t j = j0 + jj;
        if (j > pos || j < lo) {
          sr[jj] = -std::numeric_limits<float>::infinity();
          continue;
        }
        sr[jj] *= p.scale;
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

void flash_tile__vec16(const AttentionParams& p, const float* q, int64_t n, int64_t pos0, const KvView& kv,
                       float* out, int kv_head, int64_t i0, float* scratch) {
  VectorTileAny<PortableOps>(p, q, n, pos0, kv, out, kv_head, i0, scratch);
}

namespace {

bool VectorLegal(const ProblemShape& s) {
  return FlashTileVectorShape(static_cast<int>(s.m), static_cast<int>(s.n));
}

// The costs only rank the kernels: the widest vectors the CPU has first, the generic loops last.
template <int kRank>
double Rank(const ProblemShape&) {
  return kRank;
}

FlashTileKernel Entry(const char* name, Isa isa, const char* backend, bool (*legal)(const ProblemShape&),
                      double (*rank)(const ProblemShape&), FlashTileFn fn) {
  return MakeKernelEntry(name, "flash_tile", "f32", "paged", isa, backend, legal, rank, fn);
}

KernelRegistry<FlashTileFn>* BuildFlashTileRegistry() {
  auto* r = new KernelRegistry<FlashTileFn>;
  r->Register(Entry("flash_tile__generic", Isa::kPortable, "reference", nullptr, Rank<4>, flash_tile__generic));
  r->Register(Entry("flash_tile__vec16", Isa::kPortable, "portable", VectorLegal, Rank<3>, flash_tile__vec16));
#if defined(__x86_64__)
  r->Register(Entry("flash_tile__avx2", Isa::kAvx2, "x86", VectorLegal, Rank<2>, flash_tile__avx2));
  r->Register(Entry("flash_tile__avx512", Isa::kAvx512, "x86", VectorLegal, Rank<1>, flash_tile__avx512));
#endif
  return r;
}

}  // namespace

const KernelRegistry<FlashTileFn>& FlashTileKernels() {
  // Leaked on purpose, like the other kernel registries.
  static const KernelRegistry<FlashTileFn>* registry = BuildFlashTileRegistry();
  return *registry;
}

}  // namespace tessel
