// The --quantize=int8 flags of `tessel compile` and their driver.
#include "cli/quantize_flags.h"

#include <algorithm>
#include <dirent.h>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "codegen/compiler.h"
#include "graph/npy.h"
#include "kernels/cpu/cpu_features.h"
#include "passes/pass_manager.h"
#include "passes/quantize_int8/quantize_int8.h"
#include "support/atomic_file.h"

namespace tessel {
namespace {

absl::StatusOr<std::vector<std::string>> NpyFiles(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat("--calibration: '", path, "' does not exist"));
  }
  if (!S_ISDIR(st.st_mode)) return std::vector<std::string>{path};
  std::vector<std::string> files;
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return absl::PermissionDeniedError(absl::StrCat("--calibration: cannot read directory ", path));
  while (dirent* e = readdir(dir)) {
    if (absl::EndsWith(e->d_name, ".npy")) files.push_back(absl::StrCat(path, "/", e->d_name));
  }
  closedir(dir);
  std::sort(files.begin(), files.end());
  if (files.empty()) return absl::NotFoundError(absl::StrCat("--calibration: no .npy files in ", path));
  return files;
}

}  // namespace

std::vector<cli::FlagSpec> QuantizeFlagSpecs() {
  return {
      {"quantize", "MODE", "post-training quantization: int8"},
      {"calibration", "DIR_OR_NPY", "calibration inputs: a .npy (one sample or a stack [N, ...]) or a folder of them"},
      {"calibration-method", "METHOD", "entropy, percentile (99.99), minmax or mse", false, "mse"},
      {"keep-fp32", "NODE,...", "compute nodes (FusedConv, Gemm, MatMulBias, Add after fusion) that stay f32", true},
      {"int8-min-sqnr", "DB", "fall back the most sensitive layers to f32 until the output SQNR reaches DB", false, "0"},
      {"calibration-batch", "N", "samples per calibration run when the batch dimension is symbolic", false, "16",
       cli::AtLeast(1)},
      {"activations", "u8|i8", "activation type: u8 asymmetric or i8 symmetric", false, "u8"},
      {"dump-ranges", "FILE", "write the calibration table (tensor scale zero_point dtype, a line) to FILE"},
      {"int8-weight-bits", "auto|8|7",
       "7: weights in [-64, 64] per channel, which x86 CPUs without VNNI (AVX2: Haswell, Zen 1-3) multiply as "
       "bytes at about twice the 8-bit rate, for one bit of weight precision (ONNX Runtime's reduce_range); "
       "auto: 7 when compiling for such a host, else 8",
       false, "auto"},
      {"int8-fallback", "cost|none",
       "cost: int8 layers the kernel cost model prices above their f32 form on the target stay f32 where "
       "that artifact is faster (timed here for the host, by the cost model for another target or for the Arm core "
       "TESSEL_COST_CORE names); none: every layer the SQNR budget allows is int8",
       false, "cost"},
  };
}

absl::Status LoadCalibrationData(const std::string& path, const Graph& graph, int64_t batch,
                                 CalibrationOptions* options) {
  if (graph.inputs().size() != 1) {
    return absl::UnimplementedError(absl::StrCat("--calibration supports models with one input; this one has ",
                                                 graph.inputs().size()));
  }
  const TensorType& in = graph.inputs()[0]->type();
  if (in.rank() < 1) return absl::InvalidArgumentError("the model input is a scalar; nothing to calibrate");
  std::vector<int64_t> sample;  // one sample's static shape (every dim after the batch)
  for (int d = 1; d < in.rank(); ++d) {
    if (!in.dims[d].is_static()) {
      return absl::InvalidArgumentError(absl::StrCat("input '", graph.inputs()[0]->name(), "' has symbolic dim ", d,
                                                     "; fix it with --dim before quantizing"));
    }
    sample.push_back(in.dims[d].value());
  }
  if (in.dims[0].is_static()) batch = in.dims[0].value();
  absl::StatusOr<std::vector<std::string>> files = NpyFiles(path);
  if (!files.ok()) return files.status();
  // All samples stacked in memory as f32 (calibration sets are hundreds of images: tens of MB).
  std::vector<float> data;
  const int64_t per = NumElements(sample);
  for (const std::string& f : *files) {
    absl::StatusOr<Tensor> t = ReadNpy(f);
    if (!t.ok()) return t.status();
    std::vector<int64_t> tail(t->shape().begin() + (t->rank() == in.rank() ? 1 : 0), t->shape().end());
    if (t->dtype() != DType::kF32 || tail != sample) {
      return absl::InvalidArgumentError(absl::StrCat(f, ": ", t->type().ToString(), " does not hold f32 samples of shape ",
                                                     ShapeToString(sample), " for input '", graph.inputs()[0]->name(), "'"));
    }
    data.insert(data.end(), t->data<float>(), t->data<float>() + t->num_elements());
  }
  const int64_t samples = static_cast<int64_t>(data.size()) / per;
  if (samples < batch) {
    return absl::InvalidArgumentError(absl::StrCat("--calibration: ", samples, " samples, fewer than one batch of ", batch));
  }
  auto shared = std::make_shared<std::vector<float>>(std::move(data));
  options->num_batches = static_cast<int>(samples / batch);
  options->batch = [shared, sample, batch, per](int i) -> absl::StatusOr<std::vector<Tensor>> {
    std::vector<int64_t> shape = {batch};
    shape.insert(shape.end(), sample.begin(), sample.end());
    Tensor x(DType::kF32, shape);
    std::copy(shared->begin() + i * batch * per, shared->begin() + (i + 1) * batch * per, x.data<float>());
    return std::vector<Tensor>{x};
  };
  return absl::OkStatus();
}

std::string Int8F32Pipeline(const cli::Args& args) {
  return args.Has("pipeline") ? args.Get("pipeline") : std::string(kInt8Pipeline);
}

// --int8-weight-bits auto: 7 when the artifact is for this host and it is an x86 CPU without an 8-bit dot
// product (AVX2 only, or capped there by TESSEL_MAX_ISA), whose int8 kernels multiply 7-bit weights exactly
// as bytes (vpmaddubsw) at about twice their 8-bit rate; 8 everywhere else (VNNI, Arm dotprod).
bool SevenBitWeightsByDefault(const cli::Args& args) {
  const CpuFeatures& cpu = GetCpuFeatures();
  return ResolveTarget(args.Get("target")) == ResolveTarget("host") && cpu.avx2 && !cpu.avx512vnni &&
         !cpu.avx_vnni;
}

// --int8-weight-bits as QuantizeInt8Options::weight_max.
absl::StatusOr<int> Int8WeightMax(const cli::Args& args) {
  const std::string bits = args.Get("int8-weight-bits");
  if (bits == "auto") return SevenBitWeightsByDefault(args) ? 64 : 127;
  if (bits != "7" && bits != "8") {
    return absl::InvalidArgumentError(absl::StrCat("--int8-weight-bits ", bits, ": expected auto, 8 or 7"));
  }
  return bits == "7" ? 64 : 127;
}

absl::Status RequantizeInt8(const cli::Args& args, const QuantTable& table, const std::set<std::string>& keep,
                            Graph& graph) {
  absl::StatusOr<PassManager> pm = PassManager::Create(Int8F32Pipeline(args));
  if (!pm.ok()) return pm.status();
  if (absl::Status s = pm->Run(graph); !s.ok()) return s;
  QuantizeInt8Options options;
  options.keep_fp32 = keep;
  absl::StatusOr<int> weight_max = Int8WeightMax(args);
  if (!weight_max.ok()) return weight_max.status();
  options.weight_max = *weight_max;
  return QuantizeGraphInt8(graph, table, options, nullptr).status();
}

absl::StatusOr<bool> MaybeQuantizeInt8(const cli::Args& args, Graph& graph, std::ostream& log,
                                       QuantizeInt8Result* out) {
  if (!args.Has("quantize")) return false;
  if (args.Get("quantize") != "int8") {
    return absl::InvalidArgumentError(absl::StrCat("--quantize=", args.Get("quantize"), ": only int8 is supported"));
  }
  if (!args.Has("calibration")) return absl::InvalidArgumentError("--quantize=int8 needs --calibration DIR_OR_NPY");
  CalibrationOptions options;
  absl::StatusOr<CalibrationMethod> method = ParseCalibrationMethod(args.Get("calibration-method"));
  if (!method.ok()) return method.status();
  options.method = *method;
  const std::string act = args.Get("activations");
  if (act != "u8" && act != "i8") return absl::InvalidArgumentError("--activations must be u8 or i8");
  options.activation_dtype = act == "u8" ? DType::kU8 : DType::kI8;
  absl::StatusOr<int> weight_max = Int8WeightMax(args);
  if (!weight_max.ok()) return weight_max.status();
  options.weight_max = *weight_max;
  if (args.Get("int8-weight-bits") == "auto" && *weight_max == 64) {
    log << "[quantize] int8 weights in [-64, 64] (7 bits): this CPU (" << GetCpuFeatures().ToString()
        << ") has no 8-bit dot product (VNNI), and its int8 kernels multiply 7-bit weights exactly as bytes at "
           "about twice the 8-bit rate; --int8-weight-bits 8 keeps the last bit\n";
  }
  for (const std::string& list : args.GetAll("keep-fp32")) {
    for (absl::string_view name : absl::StrSplit(list, ',', absl::SkipEmpty())) options.keep_fp32.insert(std::string(name));
  }
  absl::StatusOr<double> sqnr = args.GetDouble("int8-min-sqnr");
  if (!sqnr.ok()) return sqnr.status();
  options.min_output_sqnr_db = *sqnr;
  // --pipeline with --quantize=int8: the f32 passes before calibration (default kInt8Pipeline), e.g.
  // without fuse-conv-add so that residual adds stay QAdd nodes.
  options.pipeline = Int8F32Pipeline(args);
  absl::StatusOr<int64_t> batch = args.GetInt("calibration-batch");
  if (!batch.ok()) return batch.status();
  // Calibration runs the f32 graph before the int8 pipeline binds anything; the loader needs its input.
  absl::Status s = LoadCalibrationData(args.Get("calibration"), graph, *batch, &options);
  if (!s.ok()) return s;
  options.progress = [&log](const std::string& stage, int done, int total) {
    log << "\r[quantize] " << stage << " " << done << "/" << total << (done == total ? "\n" : "") << std::flush;
  };
  absl::StatusOr<QuantizeInt8Result> result = QuantizeInt8(graph, options);
  if (!result.ok()) return result.status();
  log << result->Report();
  if (out != nullptr) *out = *result;
  if (args.Has("dump-ranges")) {
    if (absl::Status s = WriteFileAtomically(args.Get("dump-ranges"), FormatQuantTable(result->table)); !s.ok()) {
      return s;
    }
  }
  return true;
}

}  // namespace tessel
