// Weight-only GEMV (LLM decode): GB/s streamed and the fraction of single-thread read bandwidth,
// measured in this binary by a streaming sum over a buffer of the same size as the weights, for every
// registered kernel (both the f32-input and the int8-input families) on a matrix far larger than the last-level cache (16384 x 16384 by default;
// TESSEL_GEMV_BENCH_ROWS / _COLS override). Bytes counted: weights + scales + zero points + x + y.
// One thread: rates per CPU second of the benchmark thread (the bandwidth probe is timed the same way),
// so preemption on a shared machine does not count; two threads: wall time. Run with
// --benchmark_repetitions=5 --benchmark_report_aggregates_only=true on a noisy machine.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <utility>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "benchmarks/kernels/machine_limits.h"
#include "kernels/gemv/gemv.h"
#include "kernels/registry/registry.h"
#include "support/memory.h"
#include "support/thread_pool.h"

namespace tessel {
namespace {

int64_t EnvOr(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoll(v) : fallback;
}

const int64_t kRows = EnvOr("TESSEL_GEMV_BENCH_ROWS", 16384);
const int64_t kCols = EnvOr("TESSEL_GEMV_BENCH_COLS", 16384);

struct Variant {
  std::string label;
  GemvFormat format;
  int64_t group;
  bool f16_scales;
  bool zeros;
};

// Matrix bytes for a variant; the streaming-read probe reads the same number of bytes.
int64_t WeightBytes(const Variant& v) {
  int64_t bytes = kRows * GemvRowBytes(v.format, kCols);
  if (v.format == GemvFormat::kInt4Group) {
    const int64_t groups = kRows * (kCols / v.group);
    bytes += groups * (v.f16_scales ? 2 : 4) + (v.zeros ? groups : 0);
  }
  return bytes;
}

double ReadBandwidthGBs(int64_t bytes) {
  static std::map<int64_t, double>* cache = new std::map<int64_t, double>;
  auto it = cache->find(bytes);
  if (it != cache->end()) return it->second;
  const double gbs = MeasureReadBandwidthGBs(bytes, 5);
  (*cache)[bytes] = gbs;
  benchmark::AddCustomContext("read_bw_GBs_" + std::to_string(bytes >> 20) + "MiB", std::to_string(gbs));
  return gbs;
}

// A fixed byte pattern (the kernels' speed does not depend on values) in Q4_0 / Q8_0 blocks whose
// scales are 1/16.
void FillBlocks(GemvFormat format, uint8_t* p, int64_t bytes) {
  for (int64_t i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(i * 131 + 7);
  const int64_t block_bytes = format == GemvFormat::kQ4_0 ? 18 : 34;
  for (int64_t b = 0; b < bytes / block_bytes; ++b) {
    const uint16_t d = 0x2c00;  // 1/16
    std::memcpy(p + b * block_bytes, &d, 2);
  }
}

// A fixed byte pattern (the kernels' speed does not depend on values); scales are small halves.
struct Matrix {
  std::unique_ptr<uint8_t[]> w, scales, zeros;
  GemvArgs args;
};

Matrix MakeMatrix(const Variant& v) {
  Matrix m;
  const int64_t row_bytes = GemvRowBytes(v.format, kCols);
  m.w.reset(new uint8_t[kRows * row_bytes]);
  if (v.format != GemvFormat::kInt4Group) {
    FillBlocks(v.format, m.w.get(), kRows * row_bytes);
  } else {
    for (int64_t i = 0; i < kRows * row_bytes; ++i) m.w[i] = static_cast<uint8_t>(i * 131 + 7);
    const int64_t groups = kRows * (kCols / v.group);
    m.scales.reset(new uint8_t[groups * 4]);
    for (int64_t g = 0; g < groups; ++g) {
      if (v.f16_scales) {
        const uint16_t d = 0x2c00;
        std::memcpy(m.scales.get() + 2 * g, &d, 2);
      } else {
        const float d = 1.0f / 16;
        std::memcpy(m.scales.get() + 4 * g, &d, 4);
      }
    }
    if (v.zeros) {
      m.zeros.reset(new uint8_t[groups]);
      for (int64_t g = 0; g < groups; ++g) m.zeros[g] = static_cast<uint8_t>(g % 16);
    }
    m.args.scales = m.scales.get();
    m.args.zeros = m.zeros.get();
    m.args.group_size = v.group;
    m.args.f16_scales = v.f16_scales;
  }
  m.args.w = m.w.get();
  m.args.rows = kRows;
  m.args.cols = kCols;
  return m;
}

void BM_Gemv(benchmark::State& state, const GemvKernel* entry, Variant v) {
  const int threads = static_cast<int>(state.range(0));
  const double bw = ReadBandwidthGBs(WeightBytes(v));
  Matrix m = MakeMatrix(v);
  std::vector<float> x(kCols, 0.5f), y(kRows);
  m.args.x = x.data();
  m.args.y = y.data();
  ThreadPool pool(threads);
  auto fn = entry->fn;
  // int8-input kernels: x is quantized inside the timed loop, once per call, as decode does.
  const bool q8_input = entry->dtypes == "q4_0xq8" || entry->dtypes == "q8_0xq8";
  std::vector<int8_t> xq(GemvQ8PaddedCols(v.format, kCols));
  std::vector<int32_t> xbias(GemvQ8Lanes(v.format, kCols));
  std::vector<float> xscale(GemvQ8Lanes(v.format, kCols));
  const GemvQ8Input q8{xq.data(), xbias.data(), xscale.data()};
  if (q8_input) SetGemvQ8Input(q8, m.args);
  for (auto _ : state) {
    if (q8_input) QuantizeGemvInput(v.format, x.data(), kCols, q8);
    RunGemv(fn, m.args, &pool);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  const double bytes = WeightBytes(v) + 4.0 * (kRows + kCols);
  state.counters["GBs"] = benchmark::Counter(bytes / 1e9 * state.iterations(), benchmark::Counter::kIsRate);
  // Fraction of the single-thread streaming-read bandwidth (above 1 with 2 threads is possible).
  state.counters["bw_frac"] =
      benchmark::Counter(bytes / (bw * 1e9) * state.iterations(), benchmark::Counter::kIsRate);
}

// Decode-shaped: the weight matrices of TinyLlama-1.1B's 22 layers (q, k, v, o, gate, up, down: rows x
// cols 2048x2048, 256x2048, 256x2048, 2048x2048, 5632x2048, 5632x2048, 2048x5632), laid out one after
// another as in a GGUF file and run in decode order, x quantized once per matrix. Short rows (2048 or
// 5632 columns) and 154 matrix starts per token are what decode streams; the square benchmark above
// hides both.
struct ModelMatrix {
  int64_t rows, cols, offset;
};

// The model's matrices laid out back to back, `bytes(format, rows, cols)` each; their sum in *total.
std::vector<ModelMatrix> TinyLlamaMatrices(GemvFormat format, int64_t (*bytes)(GemvFormat, int64_t, int64_t),
                                           int64_t* total, int layers = static_cast<int>(EnvOr("TESSEL_GEMV_BENCH_LAYERS", 22))) {
  const int64_t shapes[7][2] = {{2048, 2048}, {256, 2048},  {256, 2048}, {2048, 2048},
                                {5632, 2048}, {5632, 2048}, {2048, 5632}};
  std::vector<ModelMatrix> mats;
  *total = 0;
  for (int l = 0; l < layers; ++l) {
    for (const auto& s : shapes) {
      mats.push_back({s[0], s[1], *total});
      *total += bytes(format, s[0], s[1]);
    }
  }
  return mats;
}

int64_t RowsBytes(GemvFormat format, int64_t rows, int64_t cols) { return rows * GemvRowBytes(format, cols); }

void BM_GemvModel(benchmark::State& state, const GemvKernel* entry, GemvFormat format) {
  const int threads = static_cast<int>(state.range(0));
  int64_t total;
  const std::vector<ModelMatrix> mats = TinyLlamaMatrices(format, RowsBytes, &total);
  const double bw = ReadBandwidthGBs(total);
  std::unique_ptr<uint8_t[]> w(new uint8_t[total]);
  FillBlocks(format, w.get(), total);
  std::vector<float> x(5632, 0.5f), y(5632);
  std::vector<int8_t> xq(GemvQ8PaddedCols(format, 5632));
  std::vector<int32_t> xbias(GemvQ8Lanes(format, 5632));
  std::vector<float> xscale(GemvQ8Lanes(format, 5632));
  const GemvQ8Input q8{xq.data(), xbias.data(), xscale.data()};
  ThreadPool pool(threads);
  auto fn = entry->fn;
  for (auto _ : state) {
    for (const ModelMatrix& m : mats) {
      GemvArgs a;
      a.w = w.get() + m.offset;
      a.rows = m.rows;
      a.cols = m.cols;
      a.x = x.data();
      a.y = y.data();
      QuantizeGemvInput(format, x.data(), m.cols, q8);
      SetGemvQ8Input(q8, a);
      RunGemv(fn, a, &pool);
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.counters["GBs"] = benchmark::Counter(total / 1e9 * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["bw_frac"] = benchmark::Counter(total / (bw * 1e9) * state.iterations(), benchmark::Counter::kIsRate);
}

// The same model in the Panel16 layout (gemv.h), as the LLM runtime repacks it at load on CPUs with
// a Panel16 kernel: one linear stream per matrix, 16 rows per vector.
struct Panel16Job {
  GemmQ8Fn fn;
  const GemmQ8Args* args;
};

void RunPanel16Rows(void* ctx, int64_t begin, int64_t end) {
  auto* job = static_cast<Panel16Job*>(ctx);
  job->fn(*job->args, begin, end);
}

// Group-wise Panel16 (Tessel's I4G128 / I4G128_A / I3G128; I4G128 is tessel quantize's default) sizes.
template <bool kAsym, int kBits>
int64_t Group128Panel16Bytes(GemvFormat, int64_t rows, int64_t cols) {
  return GemvPanel16GroupBytes(rows, cols, 128, kAsym, kBits);
}

// ggml's Q2_K ... Q6_K on their Panel16 layouts.
template <int kKQuant>
int64_t KQuantPanel16Bytes(GemvFormat, int64_t rows, int64_t cols) {
  return GemvPanel16KQuantBytes(kKQuant, rows, cols);
}

// What a Panel16 benchmark packs: Q4_0 / Q8_0 blocks, INT4 / INT3 groups of 128 (group > 0), or a
// k-quant (kquant 4 or 6).
struct Panel16Kind {
  GemvFormat format;
  int64_t group = 0;
  bool asym = false;
  int bits = 4;
  int kquant = 0;          // 2 ... 6, or kKQuantIQ4_XS
  bool nonlinear = false;  // Q4_0 layout: IQ4_NL
};

// Bytes of one matrix of `kind` in its Panel16 layout.
using Panel16BytesFn = int64_t (*)(GemvFormat, int64_t, int64_t);
Panel16BytesFn Panel16BytesOf(const Panel16Kind& kind_of) {
  const bool group = kind_of.group > 0;
  return kind_of.kquant == 2   ? KQuantPanel16Bytes<2>
         : kind_of.kquant == 3 ? KQuantPanel16Bytes<3>
         : kind_of.kquant == 4 ? KQuantPanel16Bytes<4>
         : kind_of.kquant == 5 ? KQuantPanel16Bytes<5>
         : kind_of.kquant == 6 ? KQuantPanel16Bytes<6>
         : kind_of.kquant == kKQuantIQ4_XS ? KQuantPanel16Bytes<kKQuantIQ4_XS>
         : !group              ? GemvPanel16Bytes
         : kind_of.bits == 3   ? Group128Panel16Bytes<false, 3>
         : kind_of.asym        ? Group128Panel16Bytes<true, 4>
                               : Group128Panel16Bytes<false, 4>;
}

// The matrices `mats` (total bytes) of `kind` packed into huge pages, as the runtime loads weights
// (support/mapped_file.h), from byte patterns: the kernels' speed does not depend on values.
std::shared_ptr<uint8_t> PackModelPanel16(const Panel16Kind& kind_of, const std::vector<ModelMatrix>& mats,
                                          int64_t total) {
  const GemvFormat format = kind_of.format == GemvFormat::kInt4Group ? GemvFormat::kQ4_0 : kind_of.format;  // x
  const bool group = kind_of.group > 0;
  const Panel16BytesFn panel_bytes = Panel16BytesOf(kind_of);
  std::shared_ptr<uint8_t> w(static_cast<uint8_t*>(MapHugePages(total)),
                             [total](uint8_t* p) { UnmapHugePages(p, total); });
  if (kind_of.kquant != 0) {
    // ggml super-blocks of a byte pattern with fp16 d (and dmin) of 1/16, packed once per shape.
    const int64_t bb = kind_of.kquant == 2   ? 84
                       : kind_of.kquant == 3 ? 110
                       : kind_of.kquant == 4 ? 144
                       : kind_of.kquant == 5 ? 176
                       : kind_of.kquant == 6 ? 210
                                             : 136;
    std::map<std::pair<int64_t, int64_t>, int64_t> packed;
    for (const ModelMatrix& m : mats) {
      auto it = packed.find({m.rows, m.cols});
      if (it != packed.end()) {
        std::memcpy(w.get() + m.offset, w.get() + it->second, panel_bytes(format, m.rows, m.cols));
        continue;
      }
      std::vector<uint8_t> raw(m.rows * m.cols / 256 * bb);
      for (size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<uint8_t>(i * 131 + 7);
      for (size_t i = 0; i < raw.size(); i += bb) {
        const uint16_t d = 0x2c00;
        const int64_t d_at = kind_of.kquant == 6 ? 208 : kind_of.kquant == 3 ? 108 : kind_of.kquant == 2 ? 80 : 0;
        std::memcpy(raw.data() + i + d_at, &d, 2);
        if (kind_of.kquant == 2 || kind_of.kquant == 4 || kind_of.kquant == 5) {
          std::memcpy(raw.data() + i + d_at + 2, &d, 2);  // dmin
        }
      }
      PackGemvPanel16KQuant(kind_of.kquant, raw.data(), m.rows, m.cols, w.get() + m.offset);
      packed[{m.rows, m.cols}] = m.offset;
    }
  } else if (!group) {
    // Every matrix packed from one raw pattern: the kernels' speed does not depend on values.
    std::vector<uint8_t> raw(5632 * GemvRowBytes(format, 5632));
    FillBlocks(format, raw.data(), static_cast<int64_t>(raw.size()));
    for (const ModelMatrix& m : mats) PackGemvPanel16(format, raw.data(), m.rows, m.cols, w.get() + m.offset);
  } else {
    // A byte pattern packed once per shape (records: nibbles, fp16 scales of 1/16, zeros), then copied.
    std::map<std::pair<int64_t, int64_t>, int64_t> packed;  // shape -> offset of its first copy
    for (const ModelMatrix& m : mats) {
      auto it = packed.find({m.rows, m.cols});
      if (it != packed.end()) {
        std::memcpy(w.get() + m.offset, w.get() + it->second, panel_bytes(format, m.rows, m.cols));
        continue;
      }
      Int4GroupRecords rec;
      rec.group_size = kind_of.group;
      rec.asymmetric = kind_of.asym;
      rec.bits = kind_of.bits;
      const int64_t groups = m.cols / kind_of.group, code_bytes = m.cols * kind_of.bits / 8;
      rec.scales_offset = code_bytes;
      rec.zeros_offset = code_bytes + 2 * groups;
      rec.row_bytes = code_bytes + 2 * groups + (kind_of.asym ? 2 * groups : 0);
      std::vector<uint8_t> raw(m.rows * rec.row_bytes);
      for (size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<uint8_t>(i * 131 + 7);
      for (int64_t r = 0; r < m.rows; ++r) {
        for (int64_t g = 0; g < groups; ++g) {
          const uint16_t d = 0x2c00;  // 1/16
          std::memcpy(raw.data() + r * rec.row_bytes + rec.scales_offset + 2 * g, &d, 2);
          if (kind_of.asym) raw[r * rec.row_bytes + rec.zeros_offset + g] = static_cast<uint8_t>(g % 16);
        }
      }
      rec.base = raw.data();
      PackGemvPanel16Group(rec, m.rows, m.cols, w.get() + m.offset);
      packed[{m.rows, m.cols}] = m.offset;
    }
  }
  return w;
}

void BM_GemvModelPanel16(benchmark::State& state, const GemmQ8Kernel* entry, Panel16Kind kind_of) {
  const int threads = static_cast<int>(state.range(0));
  const GemvFormat format = kind_of.format == GemvFormat::kInt4Group ? GemvFormat::kQ4_0 : kind_of.format;  // x
  const Panel16BytesFn panel_bytes = Panel16BytesOf(kind_of);
  int64_t total;
  const std::vector<ModelMatrix> mats = TinyLlamaMatrices(format, panel_bytes, &total);
  const double bw = ReadBandwidthGBs(total);
  const std::shared_ptr<uint8_t> w = PackModelPanel16(kind_of, mats, total);
  std::vector<float> x(5632, 0.5f), y(5632);
  std::vector<int8_t> xq(GemvQ8PaddedCols(format, 5632));
  std::vector<int32_t> xbias(GemvQ8Lanes(format, 5632)), block_bias(5632 / 32), half_bias(5632 / 16);
  std::vector<float> xscale(GemvQ8Lanes(format, 5632)), block_scale(5632 / 32);
  const GemvQ8Input q8{xq.data(), xbias.data(), xscale.data()};
  ThreadPool pool(threads);
  Panel16Job job{entry->fn, nullptr};
  // Wall seconds and bytes per kind of matrix (attention q/k/v/o, FFN gate/up, FFN down): which shapes
  // stream slower than the others.
  double kind_seconds[3] = {}, kind_bytes[3] = {};
  for (auto _ : state) {
    for (const ModelMatrix& m : mats) {
      const auto t0 = std::chrono::steady_clock::now();
      GemmQ8Args a;
      a.w = w.get() + m.offset;
      a.rows = m.rows;
      a.cols = m.cols;
      a.n = 1;
      QuantizeGemvInput(format, x.data(), m.cols, q8);
      GemmQ8BlockTerms(format, q8, m.cols, block_bias.data(), block_scale.data());
      if (kind_of.kquant == 6 || kind_of.kquant == 3 || kind_of.kquant == 2) {
        GemmQ8HalfBias(q8, m.cols, half_bias.data());
      }
      a.half_bias = half_bias.data();
      a.half_stride = m.cols / 16;
      a.kquant = kind_of.kquant;
      a.nonlinear = kind_of.nonlinear;
      a.xq = xq.data();
      a.xbias = xbias.data();
      a.xscale = xscale.data();
      a.block_bias = block_bias.data();
      a.block_scale = block_scale.data();
      a.y = y.data();
      a.ldy = m.rows;
      a.group_size = kind_of.group;
      a.asymmetric = kind_of.asym;
      a.group_bits = kind_of.bits;
      job.args = &a;
      if (threads == 1) {
        job.fn(a, 0, m.rows);
      } else {
        pool.ParallelFor(m.rows, 16, RunPanel16Rows, &job);
      }
      const int kind = m.cols == 5632 ? 2 : m.rows == 5632 ? 1 : 0;
      kind_seconds[kind] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      kind_bytes[kind] += static_cast<double>(panel_bytes(format, m.rows, m.cols));
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.counters["GBs"] = benchmark::Counter(total / 1e9 * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["qkvo_GBs"] = kind_bytes[0] / kind_seconds[0] / 1e9;
  state.counters["gate_up_GBs"] = kind_bytes[1] / kind_seconds[1] / 1e9;
  state.counters["down_GBs"] = kind_bytes[2] / kind_seconds[2] / 1e9;
  state.counters["bw_frac"] = benchmark::Counter(total / (bw * 1e9) * state.iterations(), benchmark::Counter::kIsRate);
}

// Prefill-shaped: one TinyLlama layer's seven matrices (in L3 after the first iteration) against
// TESSEL_GEMM_BENCH_TOKENS (64) tokens, x quantized per call as the runtime does: GMAC/s, and the
// model's prefill tokens/s that rate would give on its 22 layers (the output head aside).
void BM_GemmLayerPanel16(benchmark::State& state, const GemmQ8Kernel* entry, Panel16Kind kind_of) {
  const int64_t n = EnvOr("TESSEL_GEMM_BENCH_TOKENS", 64);
  const GemvFormat format = kind_of.format == GemvFormat::kInt4Group ? GemvFormat::kQ4_0 : kind_of.format;  // x
  int64_t total;
  const std::vector<ModelMatrix> mats = TinyLlamaMatrices(format, Panel16BytesOf(kind_of), &total, 1);
  const std::shared_ptr<uint8_t> w = PackModelPanel16(kind_of, mats, total);
  const int64_t kMaxCols = 5632;
  const int64_t xq_stride = GemvQ8PaddedCols(format, kMaxCols), lanes = GemvQ8Lanes(format, kMaxCols);
  std::vector<float> x(n * kMaxCols), y(n * kMaxCols);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1.0f;
  std::vector<int8_t> xq(n * xq_stride);
  std::vector<int32_t> xbias(n * lanes), block_bias(n * kMaxCols / 32), half_bias(n * kMaxCols / 16);
  std::vector<float> xscale(n * lanes), block_scale(n * kMaxCols / 32);
  double macs = 0;
  for (const ModelMatrix& m : mats) macs += static_cast<double>(m.rows) * m.cols * n;
  auto fn = entry->fn;
  for (auto _ : state) {
    for (const ModelMatrix& m : mats) {
      for (int64_t t = 0; t < n; ++t) {
        const GemvQ8Input in{xq.data() + t * xq_stride, xbias.data() + t * lanes, xscale.data() + t * lanes};
        QuantizeGemvInput(format, x.data() + t * m.cols, m.cols, in);
        GemmQ8BlockTerms(format, in, m.cols, block_bias.data() + t * (m.cols / 32), block_scale.data() + t * (m.cols / 32));
        if (format == GemvFormat::kQ4_0) GemmQ8HalfBias(in, m.cols, half_bias.data() + t * (m.cols / 16));
      }
      GemmQ8Args a;
      a.w = w.get() + m.offset;
      a.rows = m.rows;
      a.cols = m.cols;
      a.n = n;
      a.xq = xq.data();
      a.xbias = xbias.data();
      a.xscale = xscale.data();
      a.xq_stride = xq_stride;
      a.lane_stride = lanes;
      a.block_bias = block_bias.data();
      a.block_scale = block_scale.data();
      a.block_stride = m.cols / 32;
      a.half_bias = half_bias.data();
      a.half_stride = m.cols / 16;
      a.y = y.data();
      a.ldy = m.rows;
      a.kquant = kind_of.kquant;
      a.nonlinear = kind_of.nonlinear;
      a.group_size = kind_of.group;
      a.asymmetric = kind_of.asym;
      a.group_bits = kind_of.bits;
      fn(a, 0, m.rows);
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.counters["GMACs"] = benchmark::Counter(macs / 1e9 * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["model_tok_s"] = benchmark::Counter(n / 22.0 * state.iterations(), benchmark::Counter::kIsRate);
}

const bool kRegisteredModel = [] {
  for (const auto& e : GemmQ8Panel16Kernels().entries()) {
    if (e.backend == "reference" || !CpuSupports(e.isa)) continue;
    std::vector<std::pair<std::string, Panel16Kind>> kinds;
    if (e.dtypes.rfind("group_panel16", 0) == 0) {
      kinds = {{"i4g128", {GemvFormat::kInt4Group, 128, false, 4}},
               {"i4g128a", {GemvFormat::kInt4Group, 128, true, 4}},
               {"i3g128", {GemvFormat::kInt4Group, 128, false, 3}},
               {"q2_k", {GemvFormat::kInt4Group, 0, false, 4, 2}},
               {"q3_k", {GemvFormat::kInt4Group, 0, false, 4, 3}},
               {"q4_k", {GemvFormat::kInt4Group, 0, false, 4, 4}},
               {"q5_k", {GemvFormat::kInt4Group, 0, false, 4, 5}},
               {"q6_k", {GemvFormat::kInt4Group, 0, false, 4, 6}},
               {"iq4_xs", {GemvFormat::kInt4Group, 0, false, 4, kKQuantIQ4_XS}}};
    } else if (e.dtypes.rfind("q4_0", 0) == 0) {
      kinds = {{"q4_0", {GemvFormat::kQ4_0}}, {"iq4_nl", {GemvFormat::kQ4_0, 0, false, 4, 0, true}}};
    } else {
      kinds = {{"q8_0", {GemvFormat::kQ8_0}}};
    }
    for (const auto& [label, kind] : kinds) {
      const std::string prefill = "gemm_tinyllama_layer/" + label + "/" + e.name;
      benchmark::RegisterBenchmark(prefill.c_str(), BM_GemmLayerPanel16, &e, kind)->Unit(benchmark::kMillisecond);
      const std::string name = "gemv_tinyllama/" + label + "/" + e.name;
      benchmark::RegisterBenchmark(name.c_str(), BM_GemvModelPanel16, &e, kind)
          ->Arg(1)
          ->ArgName("threads")
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(name.c_str(), BM_GemvModelPanel16, &e, kind)
          ->Arg(2)
          ->ArgName("threads")
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
  for (const auto& e : GemvQ8Kernels().entries()) {
    if (e.backend == "reference" || !CpuSupports(e.isa)) continue;
    const GemvFormat format = e.dtypes == "q4_0xq8" ? GemvFormat::kQ4_0 : GemvFormat::kQ8_0;
    const std::string name = std::string("gemv_tinyllama/") + (format == GemvFormat::kQ4_0 ? "q4_0/" : "q8_0/") + e.name;
    benchmark::RegisterBenchmark(name.c_str(), BM_GemvModel, &e, format)->Arg(1)->ArgName("threads")->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(name.c_str(), BM_GemvModel, &e, format)
        ->Arg(2)
        ->ArgName("threads")
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  return true;
}();

const bool kRegistered = [] {
  const Variant variants[] = {
      {"q4_0", GemvFormat::kQ4_0, 0, true, false},
      {"q8_0", GemvFormat::kQ8_0, 0, true, false},
      {"i4g32_f16", GemvFormat::kInt4Group, 32, true, false},
      {"i4g128_f16", GemvFormat::kInt4Group, 128, true, false},
      {"i4g128_f32_zp", GemvFormat::kInt4Group, 128, false, true},
  };
  for (const Variant& v : variants) {
    ReadBandwidthGBs(WeightBytes(v));  // measured before the run so that the context header shows it
    std::vector<const GemvKernel*> entries;
    for (const auto& e : GemvKernels().entries()) entries.push_back(&e);
    for (const auto& e : GemvQ8Kernels().entries()) {
      if (e.backend != "reference") entries.push_back(&e);
    }
    for (const GemvKernel* ep : entries) {
      const GemvKernel& e = *ep;
      if (!CpuSupports(e.isa)) continue;
      const bool match = (v.format == GemvFormat::kQ4_0 && (e.dtypes == "q4_0xf32" || e.dtypes == "q4_0xq8")) ||
                         (v.format == GemvFormat::kQ8_0 && (e.dtypes == "q8_0xf32" || e.dtypes == "q8_0xq8")) ||
                         (v.format == GemvFormat::kInt4Group && e.dtypes == "i4gxf32");
      if (!match) continue;
      const std::string name = "gemv/" + v.label + "/" + e.name;
      benchmark::RegisterBenchmark(name.c_str(), BM_Gemv, &e, v)->Arg(1)->ArgName("threads")->Unit(benchmark::kMillisecond);
      if (e.backend != "reference") {
        benchmark::RegisterBenchmark(name.c_str(), BM_Gemv, &e, v)
            ->Arg(2)
            ->ArgName("threads")
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
      }
    }
  }
  return true;
}();

}  // namespace
}  // namespace tessel
