// GPTQ with lazy block updates, act-order and static groups, following the reference implementation
// (github.com/IST-DASLab/gptq, gptq.py) in double precision.
#include "quant/weight/gptq.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "quant/weight/linear.h"
#include "quant/weight/parallel.h"

namespace tessel::quant {
namespace {

using RowMajorF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Parameters of the n <= 128 columns from c0 of row r of w.
GroupParams ParamsOf(const Eigen::MatrixXd& w, int64_t r, int64_t c0, int64_t n, const QuantScheme& s,
                     const GptqOptions& o) {
  const auto seg = w.row(r).segment(c0, n);
  if (!o.mse) return ComputeGroupParams(s, static_cast<float>(seg.minCoeff()), static_cast<float>(seg.maxCoeff()));
  float v[128];
  for (int64_t j = 0; j < n; ++j) v[j] = static_cast<float>(seg(j));
  return SearchGroupParams(s, v, nullptr, n, o.clip_search);
}

// The lower Cholesky factor of the symmetric positive definite `a` in place, in its lower triangle (the
// strictly upper part is left as scratch): right-looking in blocks of 128 columns, each diagonal block by
// Eigen's LLT, the panel below it and the trailing update in fixed blocks on the quantizer's threads
// (Eigen's own LLT runs on one). False when `a` is not positive definite.
bool CholeskyInPlace(Eigen::MatrixXd& a) {
  const int64_t n = a.rows();
  constexpr int64_t kBlock = 128;
  for (int64_t k = 0; k < n; k += kBlock) {
    const int64_t kb = std::min(kBlock, n - k), rest = n - k - kb;
    Eigen::Ref<Eigen::MatrixXd> d = a.block(k, k, kb, kb);
    Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt(d);
    if (llt.info() != Eigen::Success) return false;
    if (rest == 0) break;
    const int64_t blocks = (rest + kBlock - 1) / kBlock;
    // The panel: A21 <- A21 L11^-T, by row blocks.
    ParallelFor(blocks, [&](int64_t b) {
      const int64_t r = k + kb + b * kBlock, h = std::min(kBlock, n - r);
      a.block(k, k, kb, kb).triangularView<Eigen::Lower>().transpose().solveInPlace<Eigen::OnTheRight>(
          a.block(r, k, h, kb));
    });
    // The trailing matrix: A22 -= A21 A21^T, each column block from its diagonal down.
    ParallelFor(blocks, [&](int64_t b) {
      const int64_t c = k + kb + b * kBlock, w = std::min(kBlock, n - c), h = n - c;
      a.block(c, c, h, w).noalias() -= a.block(c, k, h, kb) * a.block(c, k, w, kb).transpose();
    });
  }
  return true;
}

}  // namespace

void HessianAccumulator::Add(const float* x, int64_t n) {
  const int64_t cols = sum_.rows();
  // X^T X in f32 (the bulk of the work, through LinearF32's GEMM) for this chunk, summed in f64 across
  // chunks: the lower triangle in fixed blocks of 128 columns on the quantizer's threads. Block b is
  // rows [c0, cols) of X^T times the transpose of its rows [c0, c0 + w); the diagonal blocks' upper
  // parts are computed too, and never read.
  std::vector<float> xt(cols * n);  // X^T [cols, n]
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t c = 0; c < cols; ++c) xt[c * n + i] = x[i * cols + c];
  }
  constexpr int64_t kCols = 128;
  ParallelFor((cols + kCols - 1) / kCols, [&](int64_t b) {
    const int64_t c0 = b * kCols, w = std::min(kCols, cols - c0), h = cols - c0;
    RowMajorF block(h, w);
    LinearF32OneThread(xt.data() + c0 * n, h, xt.data() + c0 * n, w, n, block.data());
    sum_.block(c0, c0, h, w) += block.cast<double>();
  });
  count_ += n;
}

Eigen::MatrixXd HessianAccumulator::Hessian() const {
  Eigen::MatrixXd h = sum_.selfadjointView<Eigen::Lower>();
  if (count_ > 0) h *= 2.0 / static_cast<double>(count_);
  return h;
}

std::optional<Eigen::MatrixXd> UpperCholeskyOfInverse(const Eigen::MatrixXd& h) {
  // With J the order reversal and J H J = L L^T: H^-1 = (J L^-T J)(J L^-1 J), and J L^-1 J is upper
  // triangular with a positive diagonal, so it is the factor. One Cholesky and one triangular inverse,
  // against the reference's Cholesky, full inverse and second Cholesky. J H J is factorized in place
  // (its lower triangle becomes L): two n x n matrices in all, it and U (254 MB each for TinyLlama's
  // 5632-input down projection).
  Eigen::MatrixXd hr = h.reverse();
  if (!CholeskyInPlace(hr)) return std::nullopt;
  const int64_t n = h.rows();
  // L^-1 by column blocks on the quantizer's threads. L^-1 is lower triangular, so block [j0, j0 + w)
  // solves only the trailing system L[j0:, j0:] X = I[j0:, j0:j0 + w]: n^3 / 3 multiply-adds in all
  // instead of the n^3 of one solve against the whole identity. Fixed blocks: the same result on any
  // number of cores. U = J L^-1 J: the block lands reversed in U's columns [n - j0 - w, n - j0), rows
  // [0, n - j0); the rest of those columns is L^-1's zero upper part.
  Eigen::MatrixXd u(n, n);
  constexpr int64_t kBlock = 128;
  ParallelFor((n + kBlock - 1) / kBlock, [&](int64_t b) {
    const int64_t j0 = b * kBlock, w = std::min(kBlock, n - j0), m = n - j0;
    Eigen::MatrixXd x = Eigen::MatrixXd::Identity(m, w);
    hr.bottomRightCorner(m, m).triangularView<Eigen::Lower>().solveInPlace(x);
    u.block(0, n - j0 - w, m, w) = x.reverse();
    u.block(m, n - j0 - w, n - m, w).setZero();
  });
  u.triangularView<Eigen::StrictlyLower>().setZero();
  if (!u.allFinite()) return std::nullopt;
  return u;
}

absl::StatusOr<QuantizedMatrix> GptqQuantize(const float* w_in, int64_t rows, int64_t cols, const Eigen::MatrixXd& h,
                                             const QuantScheme& scheme, const GptqOptions& options,
                                             GptqStats* stats) {
  if (absl::Status s = ValidateScheme(scheme, cols); !s.ok()) return s;
  // The damping search below multiplies by 10 until it reaches 1: from 0, a negative or NaN it never would.
  if (!(options.damp > 0) || !std::isfinite(options.damp)) {
    return absl::InvalidArgumentError(absl::StrCat("GPTQ: damping must be a finite number > 0, not ", options.damp));
  }
  if (h.rows() != cols || h.cols() != cols) {
    return absl::InvalidArgumentError(
        absl::StrCat("GPTQ: the Hessian is ", h.rows(), " x ", h.cols(), " but the weights have ", cols, " columns"));
  }
  // Lazy batches hold whole groups, so that a group's columns are all current when it starts.
  const int64_t block = std::max<int64_t>(scheme.group, options.block / scheme.group * scheme.group);
  Eigen::MatrixXd w = Eigen::Map<const RowMajorF>(w_in, rows, cols).cast<double>();
  Eigen::MatrixXd hm = h;
  GptqStats local;
  for (int64_t c = 0; c < cols; ++c) {
    if (hm(c, c) == 0.0) {  // an input that is always zero: its weights do not matter
      hm(c, c) = 1.0;
      w.col(c).setZero();
      ++local.dead_columns;
    }
  }
  const int64_t ng = cols / scheme.group;
  std::vector<GroupParams> static_params;
  if (options.act_order) {
    static_params.resize(rows * ng);
    ParallelFor(rows, [&](int64_t r) {
      for (int64_t g = 0; g < ng; ++g) {
        static_params[r * ng + g] = ParamsOf(w, r, g * scheme.group, scheme.group, scheme, options);
      }
    });
  }
  std::vector<int64_t> perm(cols);
  std::iota(perm.begin(), perm.end(), 0);
  if (options.act_order) {
    std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return hm(a, a) > hm(b, b); });
  }
  Eigen::MatrixXd wp(rows, cols), hp(cols, cols);
  for (int64_t j = 0; j < cols; ++j) wp.col(j) = w.col(perm[j]);
  for (int64_t i = 0; i < cols; ++i) {
    for (int64_t j = 0; j < cols; ++j) hp(i, j) = hm(perm[i], perm[j]);
  }
  // U: the upper Cholesky factor of H^-1 (H^-1 = U^T U); row i of U carries column i's error forward.
  const double mean_diag = hp.diagonal().mean();
  Eigen::MatrixXd u;
  for (double damp = options.damp;; damp *= 10) {
    Eigen::MatrixXd hd = hp;
    hd.diagonal().array() += damp * mean_diag;
    if (std::optional<Eigen::MatrixXd> f = UpperCholeskyOfInverse(hd)) {
      u = *std::move(f);
      local.damp_used = damp;
      break;
    }
    if (damp >= 1.0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "GPTQ: the Hessian (", cols, " inputs) is not positive definite even with damping ", damp,
          " x its mean diagonal; the calibration activations may contain NaN or infinity"));
    }
  }

  QuantizedMatrix q;
  q.Resize(scheme, rows, cols);
  std::vector<GroupParams> current(rows);
  for (int64_t i1 = 0; i1 < cols; i1 += block) {
    const int64_t count = std::min(block, cols - i1);
    Eigen::MatrixXd w1 = wp.middleCols(i1, count);
    Eigen::MatrixXd err1(rows, count);
    for (int64_t i = 0; i < count; ++i) {
      const int64_t col = i1 + i;
      const int64_t orig = perm[col];
      if (!options.act_order && col % scheme.group == 0) {
        ParallelFor(rows, [&](int64_t r) { current[r] = ParamsOf(w1, r, i, scheme.group, scheme, options); });
      }
      const double d = u(col, col);
      for (int64_t r = 0; r < rows; ++r) {
        const GroupParams& p = options.act_order ? static_params[r * ng + orig / scheme.group] : current[r];
        const double wv = w1(r, i);
        const int code = QuantizeValue(static_cast<float>(wv), p, scheme.max_code());
        q.codes[r * cols + orig] = static_cast<uint8_t>(code);
        q.param(r, orig) = p;
        err1(r, i) = (wv - DequantizeValue(code, p)) / d;
      }
      const int64_t rest = count - i - 1;
      if (rest > 0) w1.rightCols(rest).noalias() -= err1.col(i) * u.block(col, col + 1, 1, rest);
    }
    const int64_t tail = cols - i1 - count;
    if (tail > 0) {
      // The lazy batch's update of the later columns, in fixed blocks of 256 columns on the threads.
      constexpr int64_t kCols = 256;
      const int64_t c0 = i1 + count;
      ParallelFor((tail + kCols - 1) / kCols, [&](int64_t b) {
        const int64_t c = c0 + b * kCols, w = std::min(kCols, cols - c);
        wp.middleCols(c, w).noalias() -= err1 * u.block(i1, c, count, w);
      });
    }
  }
  if (stats != nullptr) *stats = local;
  return q;
}

}  // namespace tessel::quant
