// Winograd F(2x2, 3x3) and F(4x4, 3x3), channels last. Transforms run over channel vectors (unit
// stride, no calls: the compiler vectorizes them) and are split across the session's threads by tiles.
// Both variants share one kernel (blocks of tiles, one GEMM per transform point: XNNPACK's fully
// connected operator, or Tessel's PackedGemmF32 where XNNPACK's f32 GEMM is slow, XnnpackF32GemmIsSlow)
// and differ only in their transforms, which a traits struct supplies.
#include "kernels/conv/winograd.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/gemm/gemm.h"
#include "kernels/registry/conv_geometry.h"
#include "kernels/xnnpack/xnn_init.h"
#include "pthreadpool.h"
#include "xnnpack.h"

namespace tessel {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// The per-channel transforms are compiled for each x86 vector width and picked at load time
// (GCC function multiversioning), so the portable build still runs them with AVX-512 where present.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TESSEL_WINOGRAD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TESSEL_WINOGRAD_CLONES
#endif

// ---- F(2x2, 3x3): B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], A^T = [1 1 1 0; 0 1 -1 -1] ----------

// The per-channel transforms, written for the vectorizer: unit stride, no branches or calls.
TESSEL_WINOGRAD_CLONES void InputTransformF2(int64_t channels, const float* const (&d)[4][4],
                                             float* const (&v)[16]) {
#pragma GCC ivdep
  for (int64_t c = 0; c < channels; ++c) {
    float t[4][4];
    for (int s = 0; s < 4; ++s) {
      t[0][s] = d[0][s][c] - d[2][s][c];
      t[1][s] = d[1][s][c] + d[2][s][c];
      t[2][s] = d[2][s][c] - d[1][s][c];
      t[3][s] = d[1][s][c] - d[3][s][c];
    }
    for (int r = 0; r < 4; ++r) {
      v[r * 4 + 0][c] = t[r][0] - t[r][2];
      v[r * 4 + 1][c] = t[r][1] + t[r][2];
      v[r * 4 + 2][c] = t[r][2] - t[r][1];
      v[r * 4 + 3][c] = t[r][1] - t[r][3];
    }
  }
}

TESSEL_WINOGRAD_CLONES void OutputTransformF2(int64_t channels, const float* const (&m)[16], const float* bias,
                                              const float* const (&res)[4], float* const (&y)[4], float lo,
                                              float hi) {
#pragma GCC ivdep
  for (int64_t c = 0; c < channels; ++c) {
    float t[2][4];
    for (int q = 0; q < 4; ++q) {
      t[0][q] = m[q][c] + m[4 + q][c] + m[8 + q][c];
      t[1][q] = m[4 + q][c] - m[8 + q][c] - m[12 + q][c];
    }
    for (int r = 0; r < 2; ++r) {
      const float y0 = t[r][0] + t[r][1] + t[r][2] + bias[c] + res[r * 2][c];
      const float y1 = t[r][1] - t[r][2] - t[r][3] + bias[c] + res[r * 2 + 1][c];
      y[r * 2][c] = std::min(std::max(y0, lo), hi);
      y[r * 2 + 1][c] = std::min(std::max(y1, lo), hi);
    }
  }
}

// U = G f G^T with G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1].
void WeightTransformF2(const float (&f)[3][3], float (&u)[16]) {
  float t[4][3];
  for (int j = 0; j < 3; ++j) {
    t[0][j] = f[0][j];
    t[1][j] = 0.5f * (f[0][j] + f[1][j] + f[2][j]);
    t[2][j] = 0.5f * (f[0][j] - f[1][j] + f[2][j]);
    t[3][j] = f[2][j];
  }
  for (int i = 0; i < 4; ++i) {
    u[i * 4 + 0] = t[i][0];
    u[i * 4 + 1] = 0.5f * (t[i][0] + t[i][1] + t[i][2]);
    u[i * 4 + 2] = 0.5f * (t[i][0] - t[i][1] + t[i][2]);
    u[i * 4 + 3] = t[i][2];
  }
}

// ---- F(4x4, 3x3), points 0, 1, -1, 1/2, -2 and infinity --------------------------------------------------
//   B^T = [1 -3/2 -2 3/2 1 0;  0 -1 1/2 5/2 1 0;  0 1 -5/2 1/2 1 0;  0 -2 -1 2 1 0;  0 1/2 -1 -1/2 1 0;
//          0 1 -3/2 -2 3/2 1]
//   A^T = [1 1 1 1 1 0;  0 1 -1 1/2 -2 0;  0 1 1 1/4 4 0;  0 1 -1 1/8 -8 1]
//   G   = [1 0 0;  1/3 1/3 1/3;  -1/3 1/3 -1/3;  -16/15 -8/15 -4/15;  1/15 -2/15 4/15;  0 0 1]
// Lavin & Gray's points 0, +-1, +-2 give transforms with fewer operations (the +-2 rows share their
// terms), but 1/2 and -2 in place of 2 and -2 round less (Barabasz et al., "Error analysis and improving
// the accuracy of Winograd convolution for deep neural networks", 2020): on random channels-last tiles
// (C = 256, inputs after a ReLU) the largest error against float64 is 3.8e-6 of the output's magnitude
// instead of 1.15e-5 (RMS 3.6e-7 instead of 5.5e-7), which took a compiled ResNet-50 from 1.0e-4 to
// 6e-5 of PyTorch's float64 output on an AVX2 CPU, for 16 instead of 12 operations per 6 inputs in the
// input transform and 12 instead of 10 in the output one. The fractions of G are applied once, in
// double, at prepare time; every B^T and A^T coefficient is exact in float.

// One dimension of each F(4x4) transform: B^T x (6 values to 6) and A^T x (6 to 4); the 2-D transforms
// apply them to the columns, then to the rows.
__attribute__((always_inline)) inline void InputLineF4(const float (&x)[6], float (&y)[6]) {
  const float u = x[3] - x[1], w = x[4] - x[2];
  y[0] = (x[0] + x[4]) - 2.0f * x[2] + 1.5f * u;
  y[1] = (x[4] - x[1]) + 0.5f * x[2] + 2.5f * x[3];
  y[2] = (x[4] + x[1]) - 2.5f * x[2] + 0.5f * x[3];
  y[3] = w + 2.0f * u;
  y[4] = w - 0.5f * u;
  y[5] = (x[1] + x[5]) - 2.0f * x[3] + 1.5f * w;
}

__attribute__((always_inline)) inline void OutputLineF4(const float (&x)[6], float (&y)[4]) {
  const float a = x[1] + x[2], b = x[1] - x[2];
  y[0] = x[0] + a + x[3] + x[4];
  y[1] = b + 0.5f * x[3] - 2.0f * x[4];
  y[2] = a + 0.25f * x[3] + 4.0f * x[4];
  y[3] = b + 0.125f * x[3] - 8.0f * x[4] + x[5];
}

TESSEL_WINOGRAD_CLONES void InputTransformF4(int64_t channels, const float* const (&d)[6][6],
                                             float* const (&v)[36]) {
#pragma GCC ivdep
  for (int64_t c = 0; c < channels; ++c) {
    float t[6][6];  // t[i][s]: B^T applied to column s
    #pragma GCC unroll 6
    for (int s = 0; s < 6; ++s) {
      const float col[6] = {d[0][s][c], d[1][s][c], d[2][s][c], d[3][s][c], d[4][s][c], d[5][s][c]};
      float out[6];
      InputLineF4(col, out);
      #pragma GCC unroll 6
      for (int i = 0; i < 6; ++i) t[i][s] = out[i];
    }
    #pragma GCC unroll 6
    for (int r = 0; r < 6; ++r) {
      float out[6];
      InputLineF4(t[r], out);
      #pragma GCC unroll 6
      for (int i = 0; i < 6; ++i) v[r * 6 + i][c] = out[i];
    }
  }
}

TESSEL_WINOGRAD_CLONES void OutputTransformF4(int64_t channels, const float* const (&m)[36], const float* bias,
                                              const float* const (&res)[16], float* const (&y)[16], float lo,
                                              float hi) {
#pragma GCC ivdep
  for (int64_t c = 0; c < channels; ++c) {
    float t[4][6];  // t[i][q]: A^T applied to column q
    #pragma GCC unroll 6
    for (int q = 0; q < 6; ++q) {
      const float col[6] = {m[q][c], m[6 + q][c], m[12 + q][c], m[18 + q][c], m[24 + q][c], m[30 + q][c]};
      float out[4];
      OutputLineF4(col, out);
      #pragma GCC unroll 4
      for (int i = 0; i < 4; ++i) t[i][q] = out[i];
    }
    #pragma GCC unroll 6
    for (int r = 0; r < 4; ++r) {
      float o[4];
      OutputLineF4(t[r], o);
      #pragma GCC unroll 6
      for (int s = 0; s < 4; ++s) {
        const float val = o[s] + bias[c] + res[r * 4 + s][c];
        y[r * 4 + s][c] = std::min(std::max(val, lo), hi);
      }
    }
  }
}

void WeightTransformF4(const float (&f)[3][3], float (&u)[36]) {
  static constexpr double kG[6][3] = {{1, 0, 0},
                                      {1.0 / 3, 1.0 / 3, 1.0 / 3},
                                      {-1.0 / 3, 1.0 / 3, -1.0 / 3},
                                      {-16.0 / 15, -8.0 / 15, -4.0 / 15},
                                      {1.0 / 15, -2.0 / 15, 4.0 / 15},
                                      {0, 0, 1}};
  double t[6][3];
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 3; ++j) t[i][j] = kG[i][0] * f[0][j] + kG[i][1] * f[1][j] + kG[i][2] * f[2][j];
  }
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 6; ++j) {
      u[i * 6 + j] = static_cast<float>(t[i][0] * kG[j][0] + t[i][1] * kG[j][1] + t[i][2] * kG[j][2]);
    }
  }
}

// ---- the two variants ------------------------------------------------------------------------------------

struct F2x2 {
  static constexpr int kOut = 2;    // output tile edge
  static constexpr int kAlpha = 4;  // input tile edge, kOut + 2
  static constexpr const char* kName = "tessel_f32_conv2d_3x3s1_nhwc__winograd_f2x2";
  static void Weights(const float (&f)[3][3], float (&u)[16]) { WeightTransformF2(f, u); }
  static void Input(int64_t c, const float* const (&d)[4][4], float* const (&v)[16]) { InputTransformF2(c, d, v); }
  static void Output(int64_t c, const float* const (&m)[16], const float* bias, const float* const (&res)[4],
                     float* const (&y)[4], float lo, float hi) {
    OutputTransformF2(c, m, bias, res, y, lo, hi);
  }
};

struct F4x4 {
  static constexpr int kOut = 4;
  static constexpr int kAlpha = 6;
  static constexpr const char* kName = "tessel_f32_conv2d_3x3s1_nhwc__winograd_f4x4";
  static void Weights(const float (&f)[3][3], float (&u)[36]) { WeightTransformF4(f, u); }
  static void Input(int64_t c, const float* const (&d)[6][6], float* const (&v)[36]) { InputTransformF4(c, d, v); }
  static void Output(int64_t c, const float* const (&m)[36], const float* bias, const float* const (&res)[16],
                     float* const (&y)[16], float lo, float hi) {
    OutputTransformF4(c, m, bias, res, y, lo, hi);
  }
};

bool WinogradLegal(const OpQuery& q) {
  for (const OperandInfo& o : q.inputs) {
    if (o.present && o.type.dtype != DType::kF32) return false;
  }
  if (!q.has_input(1) || !q.inputs[1].constant || (q.has_input(2) && !q.inputs[2].constant)) return false;
  if (!ReadClampActivation(q.node, "").is_clamp) return false;
  absl::StatusOr<Conv2dGeometry> g = ResolveConv2dNhwc(q.node, q.input(0), q.input(1));
  return g.ok() && g->kh == 3 && g->kw == 3 && g->sh == 1 && g->sw == 1 && g->dh == 1 && g->dw == 1 && g->groups == 1;
}

template <class W>
double WinogradCost(const OpQuery& q) {
  absl::StatusOr<Conv2dGeometry> g = ResolveConv2dNhwc(q.node, q.input(0), q.input(1));
  if (!g.ok()) return 1e9;
  constexpr int kPoints = W::kAlpha * W::kAlpha;
  const double tiles = g->n * ((g->oh + W::kOut - 1) / W::kOut) * ((g->ow + W::kOut - 1) / W::kOut);
  const double gemm_flops = kPoints * 2.0 * tiles * g->c * g->m;
  // The transformed weights (points/9 of the original) stream once per run; transforms touch V and
  // M (points values per tile and channel) twice each, in L2.
  const double weight_bytes = 4.0 * kPoints * g->c * g->m;
  const double transform_bytes = 4.0 * kPoints * tiles * (g->c + g->m) * 2;
  // Each point's GEMM is an XNNPACK fully connected layer, which sweeps its weights for every 7 rows
  // (tiles): per-point weights past L2's share stream again and again (ResNet-18's 7x7x512 layers).
  const double point_bytes = 4.0 * g->c * g->m;
  // Where XNNPACK's GEMM is slow the points run on Tessel's AVX2 GEMM (~80 GFLOP/s, conv_kernels.cc).
  if (XnnpackF32GemmIsSlow()) return gemm_flops / 80e9 + weight_bytes / 20e9 + transform_bytes / 60e9;
  const double restream = point_bytes >= (512 << 10) ? weight_bytes * (std::ceil(tiles / 7.0) - 1) / 50e9 : 0.0;
  return gemm_flops / 150e9 + weight_bytes / 20e9 + transform_bytes / 60e9 + restream;
}

template <class W>
class WinogradKernel : public OpKernel {
 public:
  static constexpr int kOut = W::kOut;
  static constexpr int kAlpha = W::kAlpha;
  static constexpr int kPoints = kAlpha * kAlpha;

  ~WinogradKernel() override {
    for (Task& t : tasks_) {
      for (xnn_operator_t op : t.gemm) xnn_delete_operator(op);
    }
  }

  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
    if (absl::Status s = InitXnnpack(); !s.ok()) return s;
    absl::StatusOr<Conv2dGeometry> g = ResolveConv2dNhwc(args.node, args.inputs[0]->type(), args.inputs[1]->type());
    if (!g.ok()) return g.status();
    std::unique_ptr<WinogradKernel> k(new WinogradKernel);
    k->g_ = *g;
    k->pool_ = PoolForWork(args.threadpool, g->flops() / 2);
    k->flags_ = ParallelFlags(args);
    k->x_ = args.inputs[0]->data<float>();
    k->bias_ = args.inputs.size() > 2 && args.inputs[2] ? args.inputs[2]->data<float>() : nullptr;
    k->residual_ = args.inputs.size() > 3 && args.inputs[3] ? args.inputs[3]->data<float>() : nullptr;
    k->y_ = args.outputs[0].data<float>();
    const ClampActivation act = ReadClampActivation(args.node, "");
    k->lo_ = act.lo;
    k->hi_ = act.hi;
    k->tiles_h_ = (g->oh + kOut - 1) / kOut;
    k->tiles_w_ = (g->ow + kOut - 1) / kOut;
    k->tiles_ = g->n * k->tiles_h_ * k->tiles_w_;
    // Blocks of tiles whose V and M (points x block x (C + M) floats) stay within ~512 KiB, as many
    // blocks as a multiple of the thread count where the tiles allow.
    const int threads = k->pool_ != nullptr ? std::max(1, args.num_threads) : 1;
    // A small map has too few tiles for every thread to take a share and each would stream all the
    // transformed weights (ResNet-18's 7x7 layers: 4 tiles, 37.7 MB): there the threads split the output
    // channels instead, each transforming every tile's input (cheap for so few) and reading its own
    // share of the weights.
    k->split_channels_ = threads > 1 && k->tiles_ <= 8 * threads && g->m >= 32 * threads;
    if (k->split_channels_) {
      k->block_ = k->tiles_;
      k->blocks_ = 1;
    } else {
      const int64_t target = std::max<int64_t>(16, (131072 / kPoints) / (g->c + g->m));
      int64_t blocks = (k->tiles_ + target - 1) / target;
      blocks = std::min(k->tiles_, (blocks + threads - 1) / threads * threads);
      k->block_ = (k->tiles_ + blocks - 1) / blocks;
      k->blocks_ = (k->tiles_ + k->block_ - 1) / k->block_;
    }
    k->zeros_.assign(std::max(g->c, g->m), 0.0f);

    // U = G g G^T per (output, input) channel, stored per point as an [M, C] matrix.
    std::vector<float> u(kPoints * g->m * g->c);
    const float* w = args.inputs[1]->data<float>();
    for (int64_t o = 0; o < g->m; ++o) {
      for (int64_t c = 0; c < g->c; ++c) {
        float f[3][3], up[kPoints];
        for (int i = 0; i < 3; ++i) {
          for (int j = 0; j < 3; ++j) f[i][j] = w[((o * 3 + i) * 3 + j) * g->c + c];
        }
        W::Weights(f, up);
        for (int p = 0; p < kPoints; ++p) u[(p * g->m + o) * g->c + c] = up[p];
      }
    }
    // One task per thread, each with its own V and M blocks and GEMMs bound to them, so a run is one
    // parallel region (a region per GEMM would cost a thread hand-off each, ruinous on a busy machine).
    k->tasks_.resize(k->split_channels_ ? threads : std::min<int64_t>(threads, k->blocks_));
    for (size_t ti = 0; ti < k->tasks_.size(); ++ti) {
      Task& t = k->tasks_[ti];
      if (k->split_channels_) {
        const TaskRange r = SplitForTask(g->m, static_cast<int64_t>(k->tasks_.size()), static_cast<int64_t>(ti), 8);
        t.m0 = r.begin;
        t.mc = r.end - r.begin;
      } else {
        t.mc = g->m;
      }
      t.v.resize(kPoints * k->block_ * g->c);
      t.m.resize(kPoints * k->block_ * std::max<int64_t>(t.mc, 1));
      t.discard.resize(g->m);
      if (t.mc == 0) continue;  // more tasks than channel runs: nothing to compute
      if (XnnpackF32GemmIsSlow()) {
        // Per point, B = U^T ([C, mc]) packed once.
        std::vector<float> b(g->c * t.mc);
        for (int p = 0; p < kPoints; ++p) {
          const float* up = u.data() + (p * g->m + t.m0) * g->c;
          for (int64_t o = 0; o < t.mc; ++o) {
            for (int64_t c = 0; c < g->c; ++c) b[c * t.mc + o] = up[o * g->c + c];
          }
          absl::StatusOr<PackedGemmF32> packed = PackedGemmF32::Create(t.mc, g->c, b.data(), t.mc, k->block_);
          if (!packed.ok()) return packed.status();
          t.packed.push_back(*std::move(packed));
        }
        t.workspace.resize(t.packed[0].workspace_bytes() / sizeof(float) + 1);
        continue;
      }
      for (int p = 0; p < kPoints; ++p) {
        xnn_operator_t op = nullptr;
        xnn_status s = xnn_create_fully_connected_nc_f32(g->c, t.mc, g->c, t.mc, u.data() + (p * g->m + t.m0) * g->c,
                                                         nullptr, -kInf, kInf, 0, &op);
        if (s != xnn_status_success) {
          return absl::InternalError(
              absl::StrCat("node '", args.node.name(), "': XNNPACK fully connected create failed"));
        }
        t.gemm.push_back(op);
        s = xnn_setup_fully_connected_nc_f32(op, k->block_, t.v.data() + p * k->block_ * g->c,
                                             t.m.data() + p * k->block_ * t.mc, nullptr);
        if (s != xnn_status_success) {
          return absl::InternalError(
              absl::StrCat("node '", args.node.name(), "': XNNPACK fully connected setup failed"));
        }
      }
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Run() override {
    pthreadpool_parallelize_1d(pool_, &WinogradKernel::RunTask, this, tasks_.size(), flags_.get());
    return failed_ ? absl::InternalError("xnn_run_operator failed") : absl::OkStatus();
  }

 private:
  struct Task {
    std::vector<float> v, m, discard;
    std::vector<xnn_operator_t> gemm;
    std::vector<PackedGemmF32> packed;  // instead of `gemm` where XNNPACK's f32 GEMM is slow
    std::vector<float> workspace;       // packed's
    int64_t m0 = 0, mc = 0;  // the output channels [m0, m0 + mc) this task computes
  };

  // Task t takes blocks t, t + tasks, ...; with the channels split, every tile for its channels.
  static void RunTask(void* self, size_t t) {
    auto* k = static_cast<WinogradKernel*>(self);
    Task& task = k->tasks_[t];
    if (k->split_channels_) {
      if (task.mc == 0) return;
      for (int64_t i = 0; i < k->tiles_; ++i) k->TransformInput(task, 0, i);
      k->Multiply(task);
      for (int64_t i = 0; i < k->tiles_; ++i) k->TransformOutput(task, 0, i);
      return;
    }
    for (int64_t blk = t; blk < k->blocks_; blk += k->tasks_.size()) {
      const int64_t start = blk * k->block_;
      for (int64_t i = 0; i < k->block_; ++i) k->TransformInput(task, start, i);
      k->Multiply(task);
      for (int64_t i = 0; i < k->block_ && start + i < k->tiles_; ++i) k->TransformOutput(task, start, i);
    }
  }

  // M = V U^T at every point for the task's block of tiles.
  void Multiply(Task& task) {
    for (xnn_operator_t op : task.gemm) {
      if (xnn_run_operator(op, nullptr) != xnn_status_success) failed_ = true;
    }
    for (size_t p = 0; p < task.packed.size(); ++p) {
      task.packed[p].Run(block_, task.v.data() + p * block_ * g_.c, g_.c, task.m.data() + p * block_ * task.mc,
                         task.mc, GemmEpilogue{}, 0, task.mc, task.workspace.data());
    }
  }

  // V[:, i] = B^T d B for tile start + i (tiles past the end read as zeros).
  void TransformInput(Task& task, int64_t start, int64_t i) {
    const Conv2dGeometry& g = g_;
    const int64_t tile = start + i;
    const float* d[kAlpha][kAlpha];
    const int64_t b = tile / (tiles_h_ * tiles_w_);
    const int64_t iy0 = (tile / tiles_w_) % tiles_h_ * kOut - g.pad_top;
    const int64_t ix0 = tile % tiles_w_ * kOut - g.pad_left;
    for (int r = 0; r < kAlpha; ++r) {
      for (int s = 0; s < kAlpha; ++s) {
        const int64_t iy = iy0 + r, ix = ix0 + s;
        const bool inside = tile < tiles_ && iy >= 0 && iy < g.h && ix >= 0 && ix < g.w;
        d[r][s] = inside ? x_ + ((b * g.h + iy) * g.w + ix) * g.c : zeros_.data();
      }
    }
    const int64_t stride = block_ * g.c;
    float* v[kPoints];
    for (int p = 0; p < kPoints; ++p) v[p] = task.v.data() + p * stride + i * g.c;
    W::Input(g.c, d, v);
  }

  // Y = clamp(A^T M A + bias + residual) for the kOut x kOut outputs of tile start + i. Outputs past
  // the edge of an extent that is not a multiple of kOut are dropped.
  void TransformOutput(Task& task, int64_t start, int64_t i) {
    const Conv2dGeometry& g = g_;
    const int64_t tile = start + i;
    const int64_t b = tile / (tiles_h_ * tiles_w_);
    const int64_t oy0 = (tile / tiles_w_) % tiles_h_ * kOut;
    const int64_t ox0 = tile % tiles_w_ * kOut;
    const int64_t stride = block_ * task.mc;
    const float* m[kPoints];
    for (int p = 0; p < kPoints; ++p) m[p] = task.m.data() + p * stride + i * task.mc;
    // Outputs past the edge go to a discard buffer; a missing residual or bias reads zeros.
    float* y[kOut * kOut];
    const float* res[kOut * kOut];
    for (int r = 0; r < kOut; ++r) {
      for (int s = 0; s < kOut; ++s) {
        const bool inside = oy0 + r < g.oh && ox0 + s < g.ow;
        const int64_t o = inside ? ((b * g.oh + oy0 + r) * g.ow + ox0 + s) * g.m + task.m0 : -1;
        y[r * kOut + s] = inside ? y_ + o : task.discard.data();
        res[r * kOut + s] = inside && residual_ ? residual_ + o : zeros_.data();
      }
    }
    W::Output(task.mc, m, bias_ ? bias_ + task.m0 : zeros_.data(), res, y, lo_, hi_);
  }

  Conv2dGeometry g_;
  pthreadpool_t pool_ = nullptr;
  PoolFlags flags_;
  const float* x_ = nullptr;
  const float* bias_ = nullptr;
  const float* residual_ = nullptr;
  float* y_ = nullptr;
  float lo_ = 0, hi_ = 0;
  int64_t tiles_h_ = 0, tiles_w_ = 0, tiles_ = 0, block_ = 0, blocks_ = 0;
  bool split_channels_ = false;
  std::vector<Task> tasks_;
  std::vector<float> zeros_;
  std::atomic<bool> failed_{false};
};

template <class W>
absl::StatusOr<std::unique_ptr<OpKernel>> CreateWinograd(const OpKernelArgs& args) {
  const Tensor* residual = args.inputs.size() > 3 ? args.inputs[3] : nullptr;
  if (residual && residual->raw_data() == args.outputs[0].raw_data()) {
    return absl::FailedPreconditionError(
        absl::StrCat("node '", args.node.name(), "': Winograd cannot add a residual stored in place of its output"));
  }
  return WinogradKernel<W>::Create(args);
}

template <class W>
void Register(OpKernelRegistry& r) {
  OpKernelEntry e;
  e.name = W::kName;
  e.op = "tessel.FusedConv";
  e.dtypes = "f32";
  e.layout = "nhwc";
  e.backend = "winograd";
  e.legal = WinogradLegal;
  e.cost = WinogradCost<W>;
  e.create = CreateWinograd<W>;
  r.Register(std::move(e));
}

}  // namespace

void RegisterWinogradOpKernels(OpKernelRegistry& r) {
  Register<F2x2>(r);
  Register<F4x4>(r);
}

}  // namespace tessel
