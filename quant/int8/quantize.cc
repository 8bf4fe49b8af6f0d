// The INT8 quantization driver: calibration, lowering, sensitivity and fallback.
#include "quant/int8/quantize.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "graph/op_registry.h"
#include "kernels/reference/reference.h"
#include "passes/pass_manager.h"
#include "quant/int8/catalog_kernels.h"

namespace tessel {
namespace {

using Values = std::map<std::string, Tensor>;

struct Power {
  double signal = 0, noise = 0;
  void Add(const Tensor& ref, const std::vector<float>& test) {
    const float* r = ref.data<float>();
    for (size_t i = 0; i < test.size(); ++i) {
      signal += static_cast<double>(r[i]) * r[i];
      noise += (static_cast<double>(r[i]) - test[i]) * (static_cast<double>(r[i]) - test[i]);
    }
  }
  double db() const { return Sqnr(signal, noise); }
};

std::vector<float> Dequantize(const Tensor& q, const TensorQuantParams& p) {
  std::vector<float> out(q.num_elements());
  for (int64_t i = 0; i < q.num_elements(); ++i) {
    const int32_t v = q.dtype() == DType::kU8 ? q.data<uint8_t>()[i] : q.data<int8_t>()[i];
    out[i] = p.Dequantize(v);
  }
  return out;
}

std::vector<float> AsFloats(const Tensor& t) { return t.ToFloatVector(); }

Tensor QuantizeTensor(const Tensor& f, const TensorQuantParams& p) {
  Tensor q(p.dtype, f.shape());
  for (int64_t i = 0; i < f.num_elements(); ++i) {
    const int32_t v = p.Quantize(f.data<float>()[i]);
    if (p.dtype == DType::kU8) {
      q.data<uint8_t>()[i] = static_cast<uint8_t>(v);
    } else {
      q.data<int8_t>()[i] = static_cast<int8_t>(v);
    }
  }
  return q;
}

// Every value of the graph on the first `batches` calibration batches (names from `keep` only, when set).
absl::StatusOr<std::vector<Values>> Collect(const Graph& graph, const CalibrationOptions& options, int batches,
                                            const std::set<std::string>* keep) {
  std::vector<Values> all;
  for (int b = 0; b < batches; ++b) {
    absl::StatusOr<std::vector<Tensor>> in = options.batch(b);
    if (!in.ok()) return in.status();
    Values values;
    RunHooks hooks;
    hooks.kernel = options.kernel;
    hooks.observe = [&](const Value& v, const Tensor& t) {
      if (keep == nullptr || keep->count(v.name())) values[v.name()] = t;
    };
    absl::StatusOr<std::vector<Tensor>> out = RunGraph(graph, *in, hooks);
    if (!out.ok()) return out.status();
    for (size_t i = 0; i < out->size(); ++i) values["\x01output" + std::to_string(i)] = (*out)[i];
    all.push_back(std::move(values));
  }
  return all;
}

struct Evaluation {
  std::vector<LayerSensitivity> layers;
  std::vector<double> outputs;
};

// Quantizes a clone of `f32` with `keep` and compares it with the f32 values `ref`.
absl::StatusOr<Evaluation> Evaluate(const Graph& f32, const QuantTable& table, const std::set<std::string>& keep,
                                    const CalibrationOptions& options, const std::vector<Values>& ref) {
  absl::StatusOr<std::unique_ptr<Graph>> clone = CloneGraph(f32);
  if (!clone.ok()) return clone.status();
  Graph& q = **clone;
  QuantizeInt8Options qo;
  qo.keep_fp32 = keep;
  qo.weight_max = options.weight_max;
  absl::StatusOr<QuantizeInt8Summary> summary = QuantizeGraphInt8(q, table, qo, nullptr);
  if (!summary.ok()) return summary.status();
  std::map<std::string, std::string> f32_name;  // quantized value -> its f32 tensor
  std::set<std::string> wanted;
  for (const auto& [name, t] : summary->tensors) f32_name[t.quantized_name] = name, wanted.insert(t.quantized_name);
  absl::StatusOr<std::vector<Values>> got = Collect(q, options, static_cast<int>(ref.size()), &wanted);
  if (!got.ok()) return got.status();

  Evaluation e;
  absl::StatusOr<std::vector<Node*>> order = f32.TopologicalOrder();
  if (!order.ok()) return order.status();
  for (const Node* n : *order) {
    if (!IsInt8ComputeNode(*n)) continue;
    LayerSensitivity layer;
    layer.node = n->name();
    layer.op = n->op_type();
    layer.int8 = summary->compute_nodes.count(n->name()) > 0;
    if (layer.int8) {
      const Node* qn = q.FindNode(n->name());
      // An Add that took over its ReLU is compared on the ReLU's output.
      const auto folded = summary->relu_folded.find(n->output(0)->name());
      const std::string& out_f32 = folded != summary->relu_folded.end() ? folded->second : n->output(0)->name();
      const QuantizedTensor& qt = summary->tensors.at(out_f32);
      Power cumulative, local;
      for (size_t b = 0; b < ref.size(); ++b) {
        const Tensor& want = ref[b].at(out_f32);
        cumulative.Add(want, Dequantize((*got)[b].at(qt.quantized_name), qt.params));
        // The layer alone: its f32 inputs quantized with their calibrated parameters.
        std::vector<Tensor> owned;
        owned.reserve(qn->num_inputs());
        std::vector<const Tensor*> in;
        for (const Value* v : qn->inputs()) {
          if (v == nullptr) {
            in.push_back(nullptr);
          } else if (v->is_constant()) {
            in.push_back(v->constant().get());
          } else {
            const std::string& src = f32_name.at(v->name());
            owned.push_back(QuantizeTensor(ref[b].at(src), summary->tensors.at(src).params));
            in.push_back(&owned.back());
          }
        }
        std::vector<Tensor> out;
        absl::Status s = RunNode(*qn, in, options.kernel, &out);
        if (!s.ok()) return s;
        local.Add(want, Dequantize(out[0], qt.params));
      }
      layer.layer_sqnr_db = local.db();
      layer.output_sqnr_db = cumulative.db();
    }
    e.layers.push_back(layer);
  }
  for (size_t i = 0; i < f32.outputs().size(); ++i) {
    Power p;
    const std::string key = "\x01output" + std::to_string(i);
    for (size_t b = 0; b < ref.size(); ++b) p.Add(ref[b].at(key), AsFloats((*got)[b].at(key)));
    e.outputs.push_back(p.db());
  }
  return e;
}

double MinOf(const std::vector<double>& v) {
  return v.empty() ? std::numeric_limits<double>::infinity() : *std::min_element(v.begin(), v.end());
}

}  // namespace

double Sqnr(double signal, double noise) {
  if (noise <= 0) return std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(signal / noise);
}

absl::StatusOr<QuantTable> Calibrate(const Graph& graph, const CalibrationOptions& options) {
  if (options.num_batches <= 0 || !options.batch) {
    return absl::InvalidArgumentError("calibration needs at least one batch of calibration inputs");
  }
  std::map<std::string, StreamingHistogram> hist;
  RunHooks hooks;
  hooks.kernel = options.kernel ? options.kernel : CatalogKernelOverride();
  hooks.observe = [&](const Value& v, const Tensor& t) {
    if (t.dtype() == DType::kF32) hist[v.name()].Add(t.data<float>(), t.num_elements());
  };
  for (int b = 0; b < options.num_batches; ++b) {
    absl::StatusOr<std::vector<Tensor>> in = options.batch(b);
    if (!in.ok()) return in.status();
    absl::StatusOr<std::vector<Tensor>> out = RunGraph(graph, *in, hooks);
    if (!out.ok()) return out.status();
    if (options.progress) options.progress("calibration", b + 1, options.num_batches);
  }
  QuantTable table;
  for (const auto& [name, h] : hist) {
    auto it = options.tensor_methods.find(name);
    const CalibrationMethod m = it != options.tensor_methods.end() ? it->second : options.method;
    const int levels = options.activation_dtype == DType::kU8 && h.min() >= 0 ? 256 : 128;
    const std::pair<float, float> range = h.Range(m, options.percentile, levels);
    table[name] = ChooseQuantParams(range.first, range.second, options.activation_dtype);
  }
  return table;
}

absl::StatusOr<QuantizeInt8Result> QuantizeInt8(Graph& graph, const CalibrationOptions& caller_options) {
  CalibrationOptions options = caller_options;
  if (!options.kernel) options.kernel = CatalogKernelOverride();
  if (options.activation_dtype != DType::kU8 && options.activation_dtype != DType::kI8) {
    return absl::InvalidArgumentError("activation dtype must be u8 or i8");
  }
  if (!options.pipeline.empty()) {
    absl::StatusOr<PassManager> pm = PassManager::Create(options.pipeline);
    if (!pm.ok()) return pm.status();
    absl::Status s = pm->Run(graph);
    if (!s.ok()) return s;
  }
  // Names of the fused graph, checked before calibration spends its time.
  if (absl::Status s = CheckKeepFp32(graph, options.keep_fp32); !s.ok()) return s;
  QuantizeInt8Result result;
  absl::StatusOr<QuantTable> table = Calibrate(graph, options);
  if (!table.ok()) return table.status();
  result.table = std::move(*table);

  std::set<std::string> keep = options.keep_fp32;
  const int batches = std::min(options.sensitivity_batches, options.num_batches);
  if (batches > 0) {
    absl::StatusOr<std::vector<Values>> ref = Collect(graph, options, batches, nullptr);
    if (!ref.ok()) return ref.status();
    absl::StatusOr<Evaluation> e = Evaluate(graph, result.table, keep, options, *ref);
    if (!e.ok()) return e.status();
    if (options.min_output_sqnr_db > 0 && MinOf(e->outputs) < options.min_output_sqnr_db) {
      std::vector<const LayerSensitivity*> order;
      for (const LayerSensitivity& l : e->layers) {
        if (l.int8) order.push_back(&l);
      }
      std::stable_sort(order.begin(), order.end(), [](const LayerSensitivity* a, const LayerSensitivity* b) {
        return a->layer_sqnr_db < b->layer_sqnr_db;
      });
      std::vector<std::string> candidates;
      for (const LayerSensitivity* l : order) candidates.push_back(l->node);
      for (size_t i = 0; i < candidates.size() && MinOf(e->outputs) < options.min_output_sqnr_db; ++i) {
        keep.insert(candidates[i]);
        result.fallback.push_back(candidates[i]);
        if (options.progress) options.progress("fallback", static_cast<int>(i + 1), static_cast<int>(candidates.size()));
        e = Evaluate(graph, result.table, keep, options, *ref);
        if (!e.ok()) return e.status();
      }
    }
    result.layers = std::move(e->layers);
    result.graph_output_sqnr_db = std::move(e->outputs);
  }
  QuantizeInt8Options qo;
  qo.keep_fp32 = keep;
  qo.weight_max = options.weight_max;
  absl::StatusOr<QuantizeInt8Summary> summary = QuantizeGraphInt8(graph, result.table, qo, nullptr);
  if (!summary.ok()) return summary.status();
  result.summary = std::move(*summary);
  return result;
}

std::string QuantizeInt8Result::Report() const {
  std::string out = absl::StrFormat("%-44s %-10s %-9s %12s %12s\n", "layer", "op", "precision", "layer SQNR",
                                    "output SQNR");
  for (const LayerSensitivity& l : layers) {
    if (l.int8) {
      absl::StrAppend(&out, absl::StrFormat("%-44s %-10s %-9s %9.1f dB %9.1f dB\n", l.node, l.op, "int8",
                                            l.layer_sqnr_db, l.output_sqnr_db));
    } else {
      absl::StrAppend(&out, absl::StrFormat("%-44s %-10s %-9s %12s %12s\n", l.node, l.op, "f32", "-", "-"));
    }
  }
  for (size_t i = 0; i < graph_output_sqnr_db.size(); ++i) {
    absl::StrAppend(&out, absl::StrFormat("graph output %d: SQNR %.1f dB vs f32\n", static_cast<int>(i),
                                          graph_output_sqnr_db[i]));
  }
  if (!fallback.empty()) absl::StrAppend(&out, "fell back to f32 for the SQNR budget: ", absl::StrJoin(fallback, ", "), "\n");
  return out;
}

}  // namespace tessel
