// Depthwise 3x3 + pointwise 1x1 fused for real (tessel.DwPwConv, MobileNet's inverted-residual tail):
// a block of output pixels goes through the depthwise convolution into a small per-task buffer, which
// the pointwise GEMM consumes at once (Tessel's direct-A GEMM on AVX-512 and AVX2, else XNNPACK's fully
// connected microkernels); the residual is added to the block while it is in cache. The
// depthwise output never travels to memory and the residual add is not a separate pass (XNNPACK's pair
// of convolution operators writes and rereads the whole expanded tensor, then adds).
#include "kernels/conv/dwpw.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/conv/internal/dwconv3x3_ukernels.h"
#include "kernels/registry/conv_geometry.h"
#include "kernels/gemm/gemm_direct.h"
#include "kernels/xnnpack/xnn_init.h"
#include "pthreadpool.h"
#include "xnnpack.h"

namespace tessel {
namespace {

// The channel loop is compiled for each x86 vector width and picked at load time (as in winograd.cc).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TESSEL_DWPW_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TESSEL_DWPW_CLONES
#endif

// The row kernels' helpers are inlined into each clone (GCC otherwise keeps the tile functions out of
// line, passing the weight vectors through memory).
#define TESSEL_DWPW_INLINE __attribute__((always_inline)) inline

#if !defined(__aarch64__)  // aarch64 runs the depthwise microkernels of dwconv3x3.cc instead
// The row kernels are templates over the channel vector V: 16 channels as one GCC vector (one zmm in the
// AVX-512 builds, four xmm in the portable one), or 8 (one ymm in the AVX2 build: a 16-channel vector
// there is two ymm, and a tile's 9 weights, 4 accumulators, bias and clamps took 34 of AVX2's 16
// registers, spilling in every FMA chain). Unaligned access through the aligned(4) variants.
typedef float V16 __attribute__((vector_size(64)));
typedef float V8 __attribute__((vector_size(32)));
template <typename V>
struct Unaligned;
template <>
struct Unaligned<V16> {
  typedef float type __attribute__((vector_size(64), aligned(4)));
};
template <>
struct Unaligned<V8> {
  typedef float type __attribute__((vector_size(32), aligned(4)));
};
template <typename V>
constexpr int kLanes = static_cast<int>(sizeof(V) / sizeof(float));
template <typename V>
TESSEL_DWPW_INLINE V Load(const float* p) {
  return *reinterpret_cast<const typename Unaligned<V>::type*>(p);
}
template <typename V>
TESSEL_DWPW_INLINE void Store(float* p, V v) {
  *reinterpret_cast<typename Unaligned<V>::type*>(p) = v;
}

template <typename V>
TESSEL_DWPW_INLINE V Splat(float v) {
  return V{} + v;
}

// A border pixel's kLanes<V> channels from two columns of taps, kx = t and t + 1 (t = 1: the left column is
// outside the image, t = 0: the right one), with rows a, e, d at its column kx = t.
template <typename V>
TESSEL_DWPW_INLINE void BorderPixel(const float* a, const float* e, const float* d, int64_t c, const V (&wt)[9], int t,
                                    V b, V vlo, V vhi, float* o) {
  V acc = b;
  acc += Load<V>(a) * wt[t];
  acc += Load<V>(a + c) * wt[t + 1];
  acc += Load<V>(e) * wt[3 + t];
  acc += Load<V>(e + c) * wt[4 + t];
  acc += Load<V>(d) * wt[6 + t];
  acc += Load<V>(d + c) * wt[7 + t];
  acc = acc < vlo ? vlo : acc;
  acc = acc > vhi ? vhi : acc;
  Store<V>(o, acc);
}

// acc[j] += the taps of one input row for the P pixels of a tile at stride SW: pixel j's tap kx is
// column j * SW + kx of the tile, at row + (off + column) * c. Each of the (P - 1) * SW + 3 columns is
// loaded once and used by every pixel that reads it, and the P accumulators are P independent FMA
// chains (one pixel's 9 taps are one chain, 4 cycles a step). `skip_first` / `skip_last`: the tile's
// first / last column lies outside the image (its pixel is on the left / right border) and is never
// read. Taps go in the order of the one-pixel loop: kx = 0, 1, 2.
// kPin (the AVX-512 build), stride 1: each column is held in a register for its FMAs. Left alone, GCC
// folds the load into every FMA that uses the column (one zmm load per FMA, 36 per 4-pixel tile instead
// of 18), and Zen 4's L1 serves one zmm load a cycle, as many as its FMAs: MobileNetV2's stride-1
// blocks 1-5% faster pinned (cnn_layer_benchmark, e.g. 56x56x144 287 -> 274 us); its stride-2 blocks
// (a column serves at most 2 pixels) ~1% slower, so they are left alone.
template <typename V, int SW, int P, bool kPin>
TESSEL_DWPW_INLINE void TileRowTaps(const float* row, int64_t c, int64_t off, bool skip_first, bool skip_last, V w0,
                                    V w1, V w2, V (&acc)[P]) {
  constexpr int kCols = (P - 1) * SW + 3;
#pragma GCC unroll 16
  for (int col = 0; col < kCols; ++col) {
    if ((col == 0 && skip_first) || (col == kCols - 1 && skip_last)) continue;
    V x = Load<V>(row + (off + col) * c);
    if constexpr (kPin && SW == 1) __asm__("" : "+v"(x));
#pragma GCC unroll 8
    for (int j = 0; j < P; ++j) {
      const int kx = col - j * SW;
      if (kx == 0) acc[j] += x * w0;
      if (kx == 1) acc[j] += x * w1;
      if (kx == 2) acc[j] += x * w2;
    }
  }
}

// P output pixels (kLanes<V> channels) from the rows in use; a zero row (outside the image) adds nothing.
template <typename V, int SW, int P, bool kPin>
TESSEL_DWPW_INLINE void DepthwiseTile(const float* const (&rows)[3], const bool (&use)[3], int64_t c, int64_t off,
                                      bool skip_first, bool skip_last, const V (&wt)[9], V b, V vlo, V vhi,
                                      float* o) {
  V acc[P];
#pragma GCC unroll 8
  for (int j = 0; j < P; ++j) acc[j] = b;
#pragma GCC unroll 3
  for (int r = 0; r < 3; ++r) {
    if (use[r]) {
      TileRowTaps<V, SW, P, kPin>(rows[r], c, off, skip_first, skip_last, wt[3 * r], wt[3 * r + 1], wt[3 * r + 2], acc);
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < P; ++j) {
    V v = acc[j] < vlo ? vlo : acc[j];
    v = v > vhi ? vhi : v;
    Store<V>(o + j * c, v);
  }
}

// A whole row of `count` pixels at stride SW in tiles of 4, the last one 1-4 wide; the border pixels
// are in the first and last tile, their outside column skipped. rows[r] points at pixel 0's first
// tap inside the image (kx = 1 on a left border), so pixel i's tap kx is column i * SW + kx - left.
template <typename V, int SW, bool kPin>
TESSEL_DWPW_INLINE void DepthwiseRowTiles(const float* const (&rows)[3], const bool (&use)[3], int64_t c,
                                          int64_t count, bool left, bool right, const V (&wt)[9], V b, V vlo,
                                          V vhi, float* o) {
  for (int64_t i = 0; i < count; i += 4) {
    const int64_t n = std::min<int64_t>(4, count - i);
    const bool skip_first = left && i == 0, skip_last = right && i + n == count;
    const int64_t off = i * SW - (left ? 1 : 0);
    float* oi = o + i * c;
    switch (n) {
      case 4:
        DepthwiseTile<V, SW, 4, kPin>(rows, use, c, off, skip_first, skip_last, wt, b, vlo, vhi, oi);
        break;
      case 3:
        DepthwiseTile<V, SW, 3, kPin>(rows, use, c, off, skip_first, skip_last, wt, b, vlo, vhi, oi);
        break;
      case 2:
        DepthwiseTile<V, SW, 2, kPin>(rows, use, c, off, skip_first, skip_last, wt, b, vlo, vhi, oi);
        break;
      default:
        DepthwiseTile<V, SW, 1, kPin>(rows, use, c, off, skip_first, skip_last, wt, b, vlo, vhi, oi);
        break;
    }
  }
}

// One output row of a 3x3 depthwise convolution over `count` pixels: out[i, ch] = clamp(bias[ch] +
// sum_{ky, kx} row_ky[(i * stride + kx) * channels + ch] * w[(3 ky + kx) * channels + ch]). The three
// input rows start at the first pixel's left tap; a row outside the image points at a zero row (3
// pixels of zeros) with step 0. `left`: the first pixel lies on the left border, its kx = 0 taps
// outside the image, and the rows start at its kx = 1 tap (a zero row at its second pixel); `right`:
// the last pixel's kx = 2 taps are outside. Channel tiles of kLanes<V> outermost, so a tile's 9 weights and
// bias stay in registers across the row; the last partial tile goes through scalar code.
template <typename V, bool kPin>
TESSEL_DWPW_INLINE void DepthwiseRow3x3Body(int64_t channels, int64_t count, const float* __restrict r0,
                                            const float* __restrict r1, const float* __restrict r2, int64_t step0,
                                            int64_t step1, int64_t step2, bool left, bool right,
                                            const float* __restrict w, const float* __restrict bias, float lo,
                                            float hi, float* __restrict out) {
  const int64_t c = channels;
  const V vlo = Splat<V>(lo), vhi = Splat<V>(hi);
  // Where pixel 0's left tap would be, relative to the row pointers (reached only past the border).
  const int64_t shift = left ? -c : 0;
  const int64_t first = left ? 1 : 0, last = right ? count - 1 : count;  // the interior pixels
  const int64_t step = std::max({step0, step1, step2});                   // stride x c; 0 on zero rows
  const bool use[3] = {step0 != 0, step1 != 0, step2 != 0};
  int64_t ch = 0;
  for (; ch + kLanes<V> <= c; ch += kLanes<V>) {
    V wt[9];
    for (int t = 0; t < 9; ++t) wt[t] = Load<V>(w + t * c + ch);
    const V b = Load<V>(bias + ch);
    float* o = out + ch;
    // Strides 1 and 2 (MobileNet's): the whole row in tiles of pixels.
    if (step == c || step == 2 * c) {
      const float* const rows[3] = {r0 + ch, r1 + ch, r2 + ch};
      if (step == c) {
        DepthwiseRowTiles<V, 1, kPin>(rows, use, c, count, left, right, wt, b, vlo, vhi, o);
      } else {
        DepthwiseRowTiles<V, 2, kPin>(rows, use, c, count, left, right, wt, b, vlo, vhi, o);
      }
      continue;
    }
    if (left) {
      BorderPixel(r0 + ch, r1 + ch, r2 + ch, c, wt, 1, b, vlo, vhi, o);
      o += c;
    }
    const float* a = r0 + first * step0 + shift + ch;
    const float* e = r1 + first * step1 + shift + ch;
    const float* d = r2 + first * step2 + shift + ch;
    int64_t i = first;
    for (; i < last; ++i) {
      V acc = b;
      acc += Load<V>(a) * wt[0];
      acc += Load<V>(a + c) * wt[1];
      acc += Load<V>(a + 2 * c) * wt[2];
      acc += Load<V>(e) * wt[3];
      acc += Load<V>(e + c) * wt[4];
      acc += Load<V>(e + 2 * c) * wt[5];
      acc += Load<V>(d) * wt[6];
      acc += Load<V>(d + c) * wt[7];
      acc += Load<V>(d + 2 * c) * wt[8];
      acc = acc < vlo ? vlo : acc;
      acc = acc > vhi ? vhi : acc;
      Store<V>(o, acc);
      a += step0, e += step1, d += step2, o += c;
    }
    if (right) BorderPixel(a, e, d, c, wt, 0, b, vlo, vhi, o);
  }
  for (; ch < c; ++ch) {
    for (int64_t i = 0; i < count; ++i) {
      // Taps kx in [kx0, kx1) of pixel i, whose left tap is at offset i * step + shift.
      const int kx0 = i == 0 && left ? 1 : 0, kx1 = i == count - 1 && right ? 2 : 3;
      float acc = bias[ch];
      for (int kx = kx0; kx < kx1; ++kx) {
        const int64_t at = kx * c + shift + ch;
        acc += r0[i * step0 + at] * w[kx * c + ch] + r1[i * step1 + at] * w[(3 + kx) * c + ch] +
               r2[i * step2 + at] * w[(6 + kx) * c + ch];
      }
      acc = acc < lo ? lo : acc;
      out[i * c + ch] = acc > hi ? hi : acc;
    }
  }
}

// DepthwiseRow3x3Body's parameters and arguments, for the builds below.
#define TESSEL_DWPW_ROW_PARAMS                                                                                \
  int64_t channels, int64_t count, const float* __restrict r0, const float* __restrict r1,                  \
      const float* __restrict r2, int64_t step0, int64_t step1, int64_t step2, bool left, bool right,      \
      const float* __restrict w, const float* __restrict bias, float lo, float hi, float* __restrict out
#define TESSEL_DWPW_ROW_ARGS channels, count, r0, r1, r2, step0, step1, step2, left, right, w, bias, lo, hi, out

// The row kernel for the baseline ISA, and on GCC an AVX-512 build with the columns pinned in registers
// and an AVX2 build on 8-channel vectors, which PickDepthwiseRow picks by the CPU (CpuSupports, which
// TESSEL_MAX_ISA caps; target_clones would dispatch by the CPU alone).
void DepthwiseRow3x3(TESSEL_DWPW_ROW_PARAMS) { DepthwiseRow3x3Body<V16, false>(TESSEL_DWPW_ROW_ARGS); }

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target("avx512f"))) void DepthwiseRow3x3Pinned(TESSEL_DWPW_ROW_PARAMS) {
  DepthwiseRow3x3Body<V16, true>(TESSEL_DWPW_ROW_ARGS);
}
__attribute__((target("avx2,fma"))) void DepthwiseRow3x3Avx2(TESSEL_DWPW_ROW_PARAMS) {
  DepthwiseRow3x3Body<V8, false>(TESSEL_DWPW_ROW_ARGS);
}
#endif

using DepthwiseRowFn = void (*)(TESSEL_DWPW_ROW_PARAMS);

DepthwiseRowFn PickDepthwiseRow() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  if (CpuSupports(Isa::kAvx512)) return DepthwiseRow3x3Pinned;
  if (CpuSupports(Isa::kAvx2)) return DepthwiseRow3x3Avx2;
#endif
  return DepthwiseRow3x3;
}

// The same for one pixel whose taps may fall outside the image: taps[t] points at the input pixel or at
// a zero row.
TESSEL_DWPW_CLONES void DepthwisePixel3x3(int64_t channels, const float* const (&taps)[9], const float* __restrict w,
                                          const float* __restrict bias, float lo, float hi, float* __restrict out) {
  using V = V16;  // one accumulator: two ymm in the AVX2 clone do not spill
  const int64_t c = channels;
  const V vlo = Splat<V>(lo), vhi = Splat<V>(hi);
  int64_t ch = 0;
  for (; ch + 16 <= c; ch += 16) {
    V acc = Load<V>(bias + ch);
    for (int t = 0; t < 9; ++t) {
      acc += Load<V>(taps[t] + ch) * Load<V>(w + t * c + ch);
    }
    acc = acc < vlo ? vlo : acc;
    acc = acc > vhi ? vhi : acc;
    Store<V>(out + ch, acc);
  }
  for (; ch < c; ++ch) {
    float acc = bias[ch];
    for (int t = 0; t < 9; ++t) acc += taps[t][ch] * w[t * c + ch];
    acc = acc < lo ? lo : acc;
    out[ch] = acc > hi ? hi : acc;
  }
}
#endif  // !defined(__aarch64__)

// y = clamp(y + r) over n elements.
TESSEL_DWPW_CLONES void AddClamp(int64_t n, const float* __restrict r, float lo, float hi, float* __restrict y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float v = y[i] + r[i];
    y[i] = v < lo ? lo : v > hi ? hi : v;
  }
}

// X's type as the depthwise convolution sees it: with an expansion W_exp [C, 1, 1, C_in], C channels.
TensorType DepthwiseInputType(const TensorType& x, const TensorType* w_exp) {
  if (w_exp == nullptr || x.rank() != 4 || w_exp->rank() != 4) return x;
  TensorType t = x;
  t.dims[3] = w_exp->dims[0];
  return t;
}

// The shortest expansion (K = input channels) that runs on the direct-A GEMM.
constexpr int64_t kMinDirectExpansionK = 24;

class DwPwKernel : public OpKernel {
 public:
  ~DwPwKernel() override {
    for (xnn_operator_t op : fc_) xnn_delete_operator(op);
    for (xnn_operator_t op : exp_fc_) xnn_delete_operator(op);
  }

  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
    if (absl::Status s = InitXnnpack(); !s.ok()) return s;
    const bool has_exp = args.inputs.size() > 6 && args.inputs[6] != nullptr;
    const TensorType w_exp_type = has_exp ? args.inputs[6]->type() : TensorType();
    absl::StatusOr<Conv2dGeometry> g = ResolveConv2dNhwc(
        args.node, DepthwiseInputType(args.inputs[0]->type(), has_exp ? &w_exp_type : nullptr), args.inputs[1]->type());
    if (!g.ok()) return g.status();
    const Tensor& w_pw = *args.inputs[3];
    std::unique_ptr<DwPwKernel> k(new DwPwKernel);
    k->g_ = *g;
    // The depthwise and pointwise multiply-adds (an expansion only adds work).
    k->pool_ = PoolForWork(args.threadpool, g->flops() / 2 + static_cast<double>(g->n * g->oh * g->ow) * g->c *
                                                                    static_cast<double>(w_pw.dim(0)));
    k->flags_ = ParallelFlags(args);
    k->x_ = args.inputs[0]->data<float>();
    k->y_ = args.outputs[0].data<float>();
    const int64_t c = g->c;
    k->m_ = w_pw.dim(0);
    const ClampActivation dw_act = ReadClampActivation(args.node, "dw_");
    const ClampActivation pw_act = ReadClampActivation(args.node, "pw_");
    k->dw_lo_ = dw_act.lo, k->dw_hi_ = dw_act.hi;
    k->pw_lo_ = pw_act.lo, k->pw_hi_ = pw_act.hi;
    // Depthwise weights [C, 3, 3, 1] -> tap-major [9][C]; a missing bias reads as zeros.
    k->dw_w_.resize(9 * c);
    const float* wd = args.inputs[1]->data<float>();
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int t = 0; t < 9; ++t) k->dw_w_[t * c + ch] = wd[ch * 9 + t];
    }
    k->dw_b_.assign(c, 0.0f);
    if (args.inputs.size() > 2 && args.inputs[2]) std::memcpy(k->dw_b_.data(), args.inputs[2]->data<float>(), c * 4);
#if defined(__aarch64__)
    // The depthwise rows run on the NEON or SVE microkernels of the standalone depthwise kernel
    // (dwconv3x3.cc): the 16-channel loops below, written for x86 vector widths, need 36 NEON registers
    // for their weights alone.
    const bool sve = CpuSupports(Isa::kSve);
    k->arm_row_ = sve ? tessel_f32_dwconv3x3_row__sve : tessel_f32_dwconv3x3_row__neon;
    k->arm_pixel_ = sve ? tessel_f32_dwconv3x3_pixel__sve : tessel_f32_dwconv3x3_pixel__neon;
    k->arm_params_ = {c, g->sw, k->dw_w_.data(), k->dw_b_.data(), k->dw_lo_, k->dw_hi_};
    // The row microkernel takes horizontal strides 1 and 2; other strides go pixel by pixel.
    if (g->sw == 1 || g->sw == 2) k->interior_ = DwConv3x3InteriorColumns(g->w, g->ow, g->sw, g->pad_left);
    k->zeros_.assign((kDwConv3x3RunPixels * std::min<int64_t>(g->sw, 2) + 3) * c, 0.0f);
#else
    k->zeros_.assign(3 * c, 0.0f);
#endif
    k->pw_b_ = args.inputs.size() > 4 && args.inputs[4] ? args.inputs[4]->data<float>() : nullptr;
    const Tensor* residual = args.inputs.size() > 5 ? args.inputs[5] : nullptr;
    k->residual_ = residual ? residual->data<float>() : nullptr;
    k->residual_in_place_ = k->residual_ == k->y_;
    const int64_t pixels = g->n * g->oh * g->ow;
    // Blocks of pixels whose depthwise output (block x C, at most 512 KiB) stays in L2.
    k->block_ = std::max<int64_t>(1, std::min<int64_t>({pixels, 168, std::max<int64_t>(8, (512 << 10) / (4 * c))}));
    k->tasks_ = std::max(1, args.num_threads);
    if (has_exp) {
      absl::Status s = k->CreateExpansion(args);
      if (!s.ok()) return s;
    }
    const float* wp = w_pw.data<float>();  // [M, 1, 1, C] = XNNPACK's [N, K]
    const float lo = k->residual_ ? -std::numeric_limits<float>::infinity() : k->pw_lo_;
    const float hi = k->residual_ ? std::numeric_limits<float>::infinity() : k->pw_hi_;
    // Tessel's direct-A GEMM where it runs (AVX-512: 1.1-1.3x XNNPACK's fully connected on these
    // shapes; AVX2: about twice XNNPACK's, XnnpackF32GemmIsSlow); it adds the residual in its store,
    // also in place, so no copy of the residual is needed.
    if (std::isfinite(DirectGemmF32::Cost(k->block_, k->m_, c))) {
      absl::StatusOr<DirectGemmF32> direct = DirectGemmF32::CreateFromTransposed(k->m_, c, wp, k->pw_b_, k->block_);
      if (!direct.ok()) return direct.status();
      k->direct_ = *std::move(direct);
      k->use_direct_ = true;
      k->residual_in_place_ = false;
      k->mid_floats_ = k->block_ * c;
      k->SetUpScratch(args);
      return std::unique_ptr<OpKernel>(std::move(k));
    }
    for (int t = 0; t < k->tasks_; ++t) {
      xnn_operator_t op = nullptr;
      const xnn_status s = xnn_create_fully_connected_nc_f32(c, k->m_, c, k->m_, wp, k->pw_b_, lo, hi, 0, &op);
      if (s != xnn_status_success) {
        return absl::InternalError(
            absl::StrCat("node '", args.node.name(), "': XNNPACK fully connected create failed"));
      }
      k->fc_.push_back(op);
    }
    // XNNPACK's microkernels may read up to XNN_EXTRA_BYTES past their input.
    k->mid_floats_ = k->block_ * c + XNN_EXTRA_BYTES / sizeof(float);
    k->copy_floats_ = k->residual_in_place_ ? k->block_ * k->m_ : 0;
    k->SetUpScratch(args);
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Run() override {
    failed_ = false;
    RunTasks(pool_, this, tasks_, flags_);
    return failed_ ? absl::InternalError("XNNPACK fully connected run failed (tessel.DwPwConv)") : absl::OkStatus();
  }

 private:

  static int64_t Round16(int64_t floats) { return (floats + 15) / 16 * 16; }
  int64_t TaskFloats() const { return Round16(band_floats_) + Round16(mid_floats_) + Round16(copy_floats_); }

  // The per-task buffers in the session's shared scratch (where there is one), else owned.
  void SetUpScratch(const OpKernelArgs& args) { scratch_.Bind(args, tasks_, TaskFloats() * sizeof(float)); }
  float* Band(int t) { return static_cast<float*>(scratch_.Get(t)); }
  float* Mid(int t) { return Band(t) + Round16(band_floats_); }
  float* ResidualCopy(int t) { return Mid(t) + Round16(mid_floats_); }

  // The expansion's weights, band size and per-task band buffers.
  absl::Status CreateExpansion(const OpKernelArgs& args) {
    const Conv2dGeometry& g = g_;
    const Tensor& w_exp = *args.inputs[6];  // [C, 1, 1, C_in]
    c_in_ = w_exp.dim(3);
    const float* b_exp = args.inputs.size() > 7 && args.inputs[7] ? args.inputs[7]->data<float>() : nullptr;
    const ClampActivation act = ReadClampActivation(args.node, "exp_");
    exp_lo_ = act.lo, exp_hi_ = act.hi;
    // Output rows per band: the input rows they need, expanded, stay within ~384 KiB (L2).
    const int64_t row_floats = g.w * g.c;
    band_rows_ = 1;
    while (band_rows_ < g.oh && ((band_rows_) * g.sh + 3) * row_floats * 4 <= (384 << 10)) ++band_rows_;
    has_exp_ = true;
    // The most input rows a band holds: the ring's slots.
    ring_rows_ = std::min<int64_t>(g.h, (band_rows_ - 1) * g.sh + 3);
    const int64_t max_pixels = ring_rows_ * g.w;
    // Tessel's direct-A GEMM from K = 24 up; below, XNNPACK's fully connected (7x16 tiles), whose
    // fixed cost per tile weighs less when each tile has only K = 16 steps: MobileNetV2's 112x112
    // block 0.65-0.67 -> 0.61-0.63 ms on Zen 4 (per-op medians, interleaved), and gemm_benchmark's
    // mbv2_112_exp (K = 16) 0.41 vs 0.36 ms there, 0.9x on Zen 5 (gemm_direct.h). Where XNNPACK's
    // GEMM is slow (XnnpackF32GemmIsSlow) the direct GEMM takes K = 16 too: that block 0.77 -> 0.63 ms
    // (Zen 4 capped at AVX2, against Tessel's blocked GEMM; XNNPACK's was slower still).
    const bool direct_expansion = c_in_ >= kMinDirectExpansionK || XnnpackF32GemmIsSlow();
    if (direct_expansion && std::isfinite(DirectGemmF32::Cost(max_pixels, g.c, c_in_))) {
      absl::StatusOr<DirectGemmF32> direct =
          DirectGemmF32::CreateFromTransposed(g.c, c_in_, w_exp.data<float>(), b_exp, max_pixels);
      if (!direct.ok()) return direct.status();
      exp_direct_ = *std::move(direct);
      exp_use_direct_ = true;
    } else {
      for (int t = 0; t < tasks_; ++t) {
        xnn_operator_t op = nullptr;
        if (xnn_create_fully_connected_nc_f32(c_in_, g.c, c_in_, g.c, w_exp.data<float>(), b_exp, exp_lo_, exp_hi_, 0,
                                              &op) != xnn_status_success) {
          return absl::InternalError(
              absl::StrCat("node '", args.node.name(), "': XNNPACK fully connected create failed (expansion)"));
        }
        exp_fc_.push_back(op);
      }
    }
    band_floats_ = max_pixels * g.c + XNN_EXTRA_BYTES / sizeof(float);
    return absl::OkStatus();
  }

  // Expands input rows [lo, hi) of image b into `out` (row after row, C floats per pixel).
  bool Expand(int t, int64_t b, int64_t lo, int64_t hi, float* out) {
    const Conv2dGeometry& g = g_;
    if (hi <= lo) return true;
    const int64_t pixels = (hi - lo) * g.w;
    const float* a = x_ + ((b * g.h + lo) * g.w) * c_in_;
    if (exp_use_direct_) {
      exp_direct_.Run(pixels, a, c_in_, out, g.c, nullptr, 0, exp_lo_, exp_hi_);
      return true;
    }
    return xnn_setup_fully_connected_nc_f32(exp_fc_[t], pixels, a, out, nullptr) == xnn_status_success &&
           xnn_run_operator(exp_fc_[t], nullptr) == xnn_status_success;
  }

  // Where the depthwise input's rows are: the input tensor itself (ring = 0: row (b, iy) at
  // base + (b * H + iy) * W * C), or the expansion's band, a ring of `ring` rows of one image (row iy in
  // slot iy % ring), so that a band's rows shared with the next stay where they are.
  struct InputRows {
    const float* base = nullptr;
    int64_t ring = 0;
  };
  const float* InputRow(const InputRows& in, int64_t b, int64_t iy) const {
    const int64_t row = in.ring > 0 ? iy % in.ring : b * g_.h + iy;
    return in.base + row * g_.w * g_.c;
  }

  // Depthwise + pointwise for output pixels [begin, end) (whole images' rows or not).
  bool DwPwPixels(int t, int64_t begin, int64_t end, const InputRows& in) {
    const Conv2dGeometry& g = g_;
    float* mid = Mid(t);
    for (int64_t p0 = begin; p0 < end; p0 += block_) {
      const int64_t np = std::min(block_, end - p0);
      Depthwise(p0, np, mid, in);
      float* y = y_ + p0 * m_;
      const float* r = residual_ ? residual_ + p0 * m_ : nullptr;
      if (use_direct_) {
        direct_.Run(np, mid, g.c, y, m_, r, m_, pw_lo_, pw_hi_);
        continue;
      }
      if (residual_in_place_) {
        std::memcpy(ResidualCopy(t), r, np * m_ * sizeof(float));
        r = ResidualCopy(t);
      }
      if (xnn_setup_fully_connected_nc_f32(fc_[t], np, mid, y, nullptr) != xnn_status_success ||
          xnn_run_operator(fc_[t], nullptr) != xnn_status_success) {
        return false;
      }
      if (r) AddClamp(np * m_, r, pw_lo_, pw_hi_, y);
    }
    return true;
  }

  template <typename K>
  friend void tessel::RunTasks(pthreadpool_t, K*, int64_t, PoolFlags);  // calls RunTask
  void RunTask(int t) {
    const Conv2dGeometry& g = g_;
    if (!has_exp_) {
      const TaskRange pixels = SplitForTask(g.n * g.oh * g.ow, tasks_, t);
      if (!DwPwPixels(t, pixels.begin, pixels.end, InputRows{x_, 0})) failed_ = true;
      return;
    }
    // Output rows (over all images) split across tasks; each task walks its rows in bands.
    const auto [row_begin, row_end] = SplitForTask(g.n * g.oh, tasks_, t);
    float* band = Band(t);
    const int64_t row_floats = g.w * g.c;
    const InputRows ring{band, ring_rows_};
    int64_t have_b = -1, have_lo = 0, have_hi = 0;  // input rows [have_lo, have_hi) of image have_b in band
    for (int64_t r0 = row_begin; r0 < row_end;) {
      const int64_t b = r0 / g.oh, oy0 = r0 % g.oh;
      const int64_t oy1 = std::min({g.oh, oy0 + band_rows_, oy0 + (row_end - r0)});
      const int64_t lo = std::max<int64_t>(0, oy0 * g.sh - g.pad_top);
      const int64_t hi = std::min<int64_t>(g.h, (oy1 - 1) * g.sh - g.pad_top + 3);
      // Rows this band shares with the last one stay in their slots, not expanded again; hi - lo <=
      // ring_rows_, so the new rows only overwrite rows no longer needed.
      int64_t from = have_b == b && lo >= have_lo && lo < have_hi ? have_hi : lo;
      while (from < hi) {  // in runs of consecutive slots
        const int64_t slot = from % ring_rows_, n = std::min(hi - from, ring_rows_ - slot);
        if (!Expand(t, b, from, from + n, band + slot * row_floats)) {
          failed_ = true;
          return;
        }
        from += n;
      }
      have_b = b, have_lo = lo, have_hi = hi;
      if (!DwPwPixels(t, (b * g.oh + oy0) * g.ow, (b * g.oh + oy1) * g.ow, ring)) {
        failed_ = true;
        return;
      }
      r0 += oy1 - oy0;
    }
  }

#if defined(__aarch64__)
  // Depthwise output of pixels [p0, p0 + count) into out (count x C), row by row through the
  // microkernels (border pixels one at a time, the interior in runs).
  void Depthwise(int64_t p0, int64_t count, float* out, const InputRows& in) const {
    const Conv2dGeometry& g = g_;
    for (int64_t p = p0; p < p0 + count;) {
      const int64_t ox = p % g.ow, oy = (p / g.ow) % g.oh, b = p / (g.ow * g.oh);
      const int64_t end = std::min(p0 + count - p, g.ow - ox) + ox;  // exclusive ox bound in this row
      const float* rows[3];  // input rows ky = 0..2 at pixel 0, or null outside the image
      for (int ky = 0; ky < 3; ++ky) {
        const int64_t iy = oy * g.sh - g.pad_top + ky;
        rows[ky] = iy >= 0 && iy < g.h ? InputRow(in, b, iy) : nullptr;
      }
      DwConv3x3Columns(arm_row_, arm_pixel_, arm_params_, interior_, g.w, g.pad_left, rows, zeros_.data(), ox, end,
                       nullptr, out + (p - p0) * g.c);
      p += end - ox;
    }
  }
#else
  // Depthwise output of pixels [p0, p0 + count) into out (count x C).
  void Depthwise(int64_t p0, int64_t count, float* out, const InputRows& in) const {
    const Conv2dGeometry& g = g_;
    const int64_t c = g.c;
    const float* zero = zeros_.data();
    for (int64_t p = p0; p < p0 + count;) {
      const int64_t ox = p % g.ow, oy = (p / g.ow) % g.oh, b = p / (g.ow * g.oh);
      // Interior pixels of this row (all three column taps inside the image) from ox on.
      const int64_t row_end = std::min(p0 + count - p, g.ow - ox) + ox;  // exclusive ox bound
      const int64_t first_in = (g.pad_left + g.sw - 1) / g.sw;           // smallest ox with ix0 >= 0
      const int64_t span = g.w - 3 + g.pad_left;                        // largest ix0 + pad_left with ix0 + 2 < w
      const int64_t last_in = span >= 0 ? span / g.sw : -1;              // largest ox with ix0 + 2 < w
      // A border pixel with one column of taps outside (image at least 2 wide): the left one starts
      // the row's run, the right one ends it, instead of going through the per-pixel kernel (a
      // 7x7 map's border is 2 of its 7 columns).
      const int64_t ix0 = ox * g.sw - g.pad_left;
      const bool left = ix0 == -1 && g.w >= 2;
      const int64_t right_ox = last_in + 1;  // the pixel after the interior
      const bool right_edge = right_ox * g.sw - g.pad_left + 2 == g.w && g.w >= 2 && right_ox < row_end;
      // (A left border pixel is never the right one: that would need a 1-wide image. Past it, the
      // interior starts: first_in is the next pixel.)
      if ((ox >= first_in || left) && ox <= (right_edge ? right_ox : last_in)) {
        const int64_t n = (right_edge ? right_ox + 1 : std::min(row_end, last_in + 1)) - ox;
        const float* rows[3];
        int64_t steps[3];
        const int64_t start = left ? 0 : ix0;  // the first tap inside the image
        for (int ky = 0; ky < 3; ++ky) {
          const int64_t iy = oy * g.sh - g.pad_top + ky;
          const bool inside = iy >= 0 && iy < g.h;
          rows[ky] = inside ? InputRow(in, b, iy) + start * c : zero + (left ? c : 0);
          steps[ky] = inside ? g.sw * c : 0;
        }
        row_fn_(c, n, rows[0], rows[1], rows[2], steps[0], steps[1], steps[2], left, right_edge, dw_w_.data(),
                dw_b_.data(), dw_lo_, dw_hi_, out + (p - p0) * c);
        p += n;
        continue;
      }
      const float* taps[9];
      for (int ky = 0; ky < 3; ++ky) {
        const int64_t iy = oy * g.sh - g.pad_top + ky;
        for (int kx = 0; kx < 3; ++kx) {
          const int64_t ix = ox * g.sw - g.pad_left + kx;
          taps[ky * 3 + kx] =
              iy < 0 || iy >= g.h || ix < 0 || ix >= g.w ? zero : InputRow(in, b, iy) + ix * c;
        }
      }
      DepthwisePixel3x3(c, taps, dw_w_.data(), dw_b_.data(), dw_lo_, dw_hi_, out + (p - p0) * c);
      ++p;
    }
  }
#endif

  Conv2dGeometry g_;
  int64_t m_ = 0;
  pthreadpool_t pool_ = nullptr;
  PoolFlags flags_;
  const float* x_ = nullptr;
  float* y_ = nullptr;
  const float* pw_b_ = nullptr;
  const float* residual_ = nullptr;
  bool residual_in_place_ = false;
  float dw_lo_ = 0, dw_hi_ = 0, pw_lo_ = 0, pw_hi_ = 0;
  std::vector<float> dw_w_, dw_b_, zeros_;
#if defined(__aarch64__)
  DwConv3x3RowFn arm_row_ = nullptr;
  DwConv3x3PixelFn arm_pixel_ = nullptr;
  DwConv3x3Params arm_params_;
  DwConv3x3Interior interior_;
#else
  const DepthwiseRowFn row_fn_ = PickDepthwiseRow();
#endif
  DirectGemmF32 direct_;
  bool use_direct_ = false;
  std::vector<xnn_operator_t> fc_;  // one per task (an XNNPACK operator is set up per block)
  // The expansion (inputs 6, 7), when present.
  bool has_exp_ = false;
  int64_t c_in_ = 0, band_rows_ = 1, ring_rows_ = 1;
  float exp_lo_ = 0, exp_hi_ = 0;
  DirectGemmF32 exp_direct_;
  bool exp_use_direct_ = false;
  std::vector<xnn_operator_t> exp_fc_;  // the expansion's, one per task, where the direct GEMM does not run

  int64_t block_ = 1;
  int tasks_ = 1;
  // Per task: the expansion's band, the depthwise output (mid) and the residual's copy, each a
  // multiple of 16 floats, cache-line aligned (the depthwise kernel's zmm loads of the band and stores
  // to mid stay within a line), in the session's shared scratch or else the kernel's own.
  int64_t band_floats_ = 0, mid_floats_ = 0, copy_floats_ = 0;
  KernelScratch scratch_;
  std::atomic<bool> failed_{false};
};

bool DwPwLegal(const OpQuery& q) {
  for (const OperandInfo& o : q.inputs) {
    if (o.present && o.type.dtype != DType::kF32) return false;
  }
  if (q.outputs.empty() || q.output(0).dtype != DType::kF32 || !q.output(0).is_static()) return false;
  for (int i : {1, 2, 3, 4, 6, 7}) {
    if (q.has_input(i) && !q.inputs[i].constant) return false;
  }
  if (!q.has_input(1) || !q.has_input(3) || q.input(3).rank() != 4 || !q.input(3).is_static()) return false;
  if (!ReadClampActivation(q.node, "dw_").is_clamp || !ReadClampActivation(q.node, "pw_").is_clamp) return false;
  const bool has_exp = q.has_input(6);
  if (has_exp) {
    // Expansion [C, 1, 1, C_in] over X's channels, with a clamp activation.
    const TensorType& we = q.input(6);
    const TensorType& x = q.input(0);
    if (we.rank() != 4 || !we.is_static() || x.rank() != 4 || !x.dims[3].is_static()) return false;
    if (we.dims[1].value() != 1 || we.dims[2].value() != 1 || we.dims[3].value() != x.dims[3].value()) return false;
    if (!ReadClampActivation(q.node, "exp_").is_clamp) return false;
  } else if (q.has_input(7)) {
    return false;
  }
  absl::StatusOr<Conv2dGeometry> g =
      ResolveConv2dNhwc(q.node, DepthwiseInputType(q.input(0), has_exp ? &q.input(6) : nullptr), q.input(1));
  if (!g.ok()) return false;
  // Depthwise 3x3 with multiplier 1, any stride and padding, no dilation; pointwise [M, 1, 1, C].
  const TensorType& w = q.input(3);
  return g->groups == g->c && g->m == g->c && g->kh == 3 && g->kw == 3 && g->dh == 1 && g->dw == 1 &&
         w.dims[1].value() == 1 && w.dims[2].value() == 1 && w.dims[3].value() == g->c;
}

double DwPwCost(const OpQuery& q) {
  const bool has_exp = q.has_input(6);
  absl::StatusOr<Conv2dGeometry> g =
      ResolveConv2dNhwc(q.node, DepthwiseInputType(q.input(0), has_exp ? &q.input(6) : nullptr), q.input(1));
  if (!g.ok()) return 1e9;
  const double pixels = g->n * g->oh * g->ow;
  const double c = g->c;
  const double m = q.input(3).dims[0].value();
  // Depthwise: ~60 GFLOP/s with weights in registers, reading the input once; pointwise: XNNPACK's fully
  // connected rate (as in the XNNPACK backend's costs). Unlike the unfused pair, no depthwise output
  // goes to memory and back (measured per layer on MobileNetV2 with --tune: 0.6x to 1.0x the pair).
  const double dw = 18.0 * pixels * c / 60e9 + 4.0 * g->n * g->h * g->w * c / 20e9;
  const double direct = DirectGemmF32::Cost(static_cast<int64_t>(pixels), static_cast<int64_t>(m), g->c);
  const double pw = std::isfinite(direct) ? direct : 2.0 * pixels * c * m / 150e9;
  double exp = 0;
  if (has_exp) {
    const int64_t in_pixels = g->n * g->h * g->w, c_in = q.input(0).dims[3].value();
    const double d = DirectGemmF32::Cost(in_pixels, g->c, c_in);
    exp = std::isfinite(d) ? d : 2.0 * in_pixels * c * c_in / 150e9;
  }
  return dw + pw + exp;
}

}  // namespace

void RegisterDwPwOpKernels(OpKernelRegistry& r) {
  r.Register(MakeOpKernelEntry("tessel_f32_dwconv2d_3x3_pwconv2d_nhwc__fused", "tessel.DwPwConv", "f32", "nhwc",
                               Isa::kPortable, "fused", DwPwLegal, DwPwCost, DwPwKernel::Create));
}

}  // namespace tessel
