// `tessel quantize`: weight-only INT4/INT3 quantization of a Llama GGUF model (RTN, GPTQ, AWQ) with
// per-layer progress and a summary of per-layer reconstruction errors.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "llm/model/llama_model.h"
#include "llm/quantize/calibration.h"
#include "llm/quantize/llama_quantizer.h"
#include "quant/weight/parallel.h"
#include "quant/weight/scheme.h"
#include "support/mapped_file.h"

namespace tessel {

int QuantizeCommand(int argc, char** argv) {
  const std::string cmd = "quantize";
  const std::vector<cli::FlagSpec> flags = {
      {"model", "IN", "the model to quantize: a Llama-family GGUF (any weight type) or Hugging Face directory "
                      "(config.json, *.safetensors, tokenizer.json)"},
      {"method", "M", "rtn, gptq or awq", false, "gptq"},
      {"bits", "B", "bits per weight: 4 or 3 (8: Q8_0, RTN group 32 symmetric)", false, "4"},
      {"group", "G", "input channels per scale: 32, 64 or 128", false, "128"},
      {"asym", "", "asymmetric groups (a zero point per group); default symmetric"},
      {"calibration", "TEXT",
       "calibration text file (needed by gptq and awq; with --type, its inputs' importance matrix guides the "
       "scales, as llama.cpp's --imatrix)"},
      {"samples", "N", "calibration windows", false, "128", cli::AtLeast(1)},
      {"seq", "N", "tokens per calibration window (BOS included)", false, "256", cli::AtLeast(2)},
      {"seed", "S", "seed for drawing the calibration windows", false, "0"},
      {"no-act-order", "", "GPTQ: visit columns in stored order instead of by descending Hessian diagonal"},
      {"damp", "F", "GPTQ: dampening as a fraction of the Hessian's mean diagonal", false, "0.01",
       cli::AtLeast(0).ExcludingLow()},
      {"no-clip", "", "AWQ: skip the per-group clipping search"},
      {"no-imatrix", "", "--type with --calibration: measure errors on the calibration data, but quantize without "
                         "the importance matrix"},
      {"tessel-types", "", "store W4 g32 in Tessel's group type instead of ggml's Q4_0 / Q4_1"},
      {"type", "T",
       "instead of --bits/--group: quantize every matrix to ggml type T byte for byte as llama.cpp's quantize "
       "does (its scale searches; with --calibration, its --imatrix): "
       "q4_k_m, q5_k_m (Q6_K for attn_v / ffn_down in llama.cpp's layers, Q6_K head), q4_k, q5_k, "
       "q6_k, q3_k, q2_k, iq4_xs, iq4_nl, q8_0, q4_0, q4_1, q5_0, q5_1"},
      {"output-type", "T", "round an F32/F16/BF16 output head to this type (q8_0, q4_0, f16, ...) or 'keep' it",
       false, "q8_0"},
      ThreadsFlag("worker threads (default: every core, up to 16); the file does not depend on it", ""),
      {"o", "OUT.gguf", "output file"},
  };
  if (cli::WantsHelp(argc, argv)) {
    std::fputs(cli::Usage(cmd, "--model IN.gguf|HF_DIR --method rtn|gptq|awq --bits 4|3 --group 128 "
                               "[--calibration TEXT --samples 128 --seq 256] -o OUT.gguf",
                          "Quantizes every linear layer of the decoder blocks (embeddings, output head and norms keep\n"
                          "their type, except a float output head, rounded to --output-type: decode reads all of it\n"
                          "every token). W4 g32 is written as ggml's Q4_0 (symmetric) or Q4_1 (asymmetric) so that\n"
                          "llama.cpp loads it; other schemes use Tessel's TESSEL_I{4,3}G{32,64,128}[_A] types.\n"
                          "A Hugging Face directory is written as a llama GGUF (its config, tokenizer.json and\n"
                          "weights under GGUF names; --method rtn --bits 8 --group 32 makes a Q8_0 conversion).\n"
                          "Prints one line per layer with each matrix's relative output error on calibration\n"
                          "tokens (weight error for RTN without --calibration), then a summary.\n"
                          "--type T writes ggml types as llama.cpp's quantize does, e.g.\n"
                          "  tessel quantize --model IN.gguf --type q4_k_m [--calibration TEXT] -o OUT.gguf",
                          flags)
                   .c_str(),
               stdout);
    return 0;
  }
  absl::StatusOr<cli::Args> args = cli::Parse(cmd, flags, argc, argv);
  if (!args.ok()) return cli::Fail(cmd, args.status());
  if (!args->Has("model")) return cli::Fail(cmd, absl::InvalidArgumentError("--model is required"));
  if (!args->Has("o")) return cli::Fail(cmd, absl::InvalidArgumentError("-o OUT.gguf is required"));
  if (absl::Status s = cli::CheckOutputIsNotAnInput(args->Get("o"), {args->Get("model")}); !s.ok()) {
    return cli::Fail(cmd, s);
  }
  if (args->Has("threads")) {
    absl::StatusOr<int> threads = ThreadsArg(*args);
    if (!threads.ok()) return cli::Fail(cmd, threads.status());
    if (!quant::SetQuantThreads(*threads)) {
      return cli::Fail(cmd, absl::InternalError("the quantizer's threads were started before --threads was read"));
    }
  }
  quant::LlamaQuantOptions options;
  absl::StatusOr<quant::WeightMethod> method = quant::ParseWeightMethod(args->Get("method"));
  if (!method.ok()) return cli::Fail(cmd, method.status());
  options.method = *method;
  absl::StatusOr<int64_t> bits = args->GetInt("bits"), group = args->GetInt("group");
  absl::StatusOr<int64_t> samples = args->GetInt("samples"), seq = args->GetInt("seq"), seed = args->GetInt("seed");
  absl::StatusOr<double> damp = args->GetDouble("damp");
  for (const absl::Status& s : {bits.status(), group.status(), samples.status(), seq.status(), seed.status(),
                                damp.status()}) {
    if (!s.ok()) return cli::Fail(cmd, s);
  }
  if (absl::Status s = quant::ValidateBits(*bits); !s.ok()) {
    return cli::Fail(cmd, absl::InvalidArgumentError(absl::StrCat("--bits: ", s.message())));
  }
  if (absl::Status s = quant::ValidateGroup(*group); !s.ok()) {
    return cli::Fail(cmd, absl::InvalidArgumentError(absl::StrCat("--group: ", s.message())));
  }
  options.scheme.bits = static_cast<int>(*bits);
  options.scheme.group = static_cast<int>(*group);
  options.scheme.asymmetric = args->Has("asym");
  if (options.scheme.bits == 8 && (options.method != quant::WeightMethod::kRtn || options.scheme.group != 32 ||
                                   options.scheme.asymmetric)) {
    return cli::Fail(cmd, absl::InvalidArgumentError("8 bits is only written as Q8_0: --method rtn --group 32, symmetric"));
  }
  options.gptq.act_order = !args->Has("no-act-order");
  options.gptq.damp = *damp;
  options.awq_clip = !args->Has("no-clip");
  options.use_importance = !args->Has("no-imatrix");
  options.prefer_ggml_types = !args->Has("tessel-types");
  if (const std::string head = args->Get("output-type"); head == "keep") {
    options.output_type = std::nullopt;
  } else {
    // A name that does not parse has no type info to look at: test ok() first.
    absl::StatusOr<llm::GgmlType> t = llm::ParseGgmlType(head);
    const bool head_ok = t.ok() && *t != llm::GgmlType::kF32 &&
                         (llm::GetGgmlTypeInfo(*t).block_size <= 32 || *t == llm::GgmlType::kQ6_K);
    if (!head_ok) {
      return cli::Fail(cmd, absl::InvalidArgumentError(absl::StrCat(
                                "--output-type '", head, "': use keep, f16, bf16, q8_0, q6_k, q4_0 or q4_1")));
    }
    options.output_type = *t;
  }
  if (args->Has("type")) {
    std::string type = args->Get("type");
    for (char& ch : type) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (type == "q4_k_m" || type == "q5_k_m") {
      options.k_mix = true;
      type.resize(4);
      if (!args->Has("output-type")) options.output_type = llm::GgmlType::kQ6_K;
    }
    absl::StatusOr<llm::GgmlType> t = llm::ParseGgmlType(type);
    if (!t.ok() || llm::GetGgmlTypeInfo(*t).block_size == 1) {
      return cli::Fail(cmd, absl::InvalidArgumentError(absl::StrCat(
                                "--type '", args->Get("type"),
                                "': use q4_k_m, q5_k_m, q4_k, q5_k, q6_k, q3_k, q2_k, iq4_xs, iq4_nl, q8_0, "
                                "q4_0, q4_1, q5_0 or q5_1")));
    }
    if (args->Has("method") && options.method != quant::WeightMethod::kRtn) {
      return cli::Fail(cmd, absl::InvalidArgumentError(
                                "--type quantizes as llama.cpp does (no GPTQ/AWQ): leave out --method or use rtn"));
    }
    options.method = quant::WeightMethod::kRtn;
    options.ggml_type = *t;
  }

  std::vector<std::vector<int32_t>> calibration;
  if (args->Has("calibration")) {
    absl::StatusOr<std::string> text = ReadFileToString(args->Get("calibration"));
    if (!text.ok()) return cli::Fail(cmd, text.status());
    // The tokenizer comes from the model; loading maps the file, so this costs little.
    absl::StatusOr<std::unique_ptr<llm::LlamaModel>> model = llm::LoadModel(args->Get("model"), FileLoad::kMap);
    if (!model.ok()) return cli::Fail(cmd, model.status());
    absl::StatusOr<std::vector<std::vector<int32_t>>> windows =
        quant::CalibrationSamples((*model)->tokenizer(), *text, *samples, *seq, static_cast<uint64_t>(*seed));
    if (!windows.ok()) return cli::Fail(cmd, windows.status());
    calibration = *std::move(windows);
    std::fprintf(stderr, "calibration: %lld windows of %lld tokens from %s\n", static_cast<long long>(*samples),
                 static_cast<long long>(*seq), args->Get("calibration").c_str());
  } else if (options.method != quant::WeightMethod::kRtn) {
    return cli::Fail(cmd, absl::InvalidArgumentError(
                              absl::StrCat("--method ", args->Get("method"), " needs --calibration TEXT")));
  }
  const std::string scheme = options.ggml_type ? absl::StrCat(args->Get("type"), " (ggml)") : options.scheme.ToString();
  std::fprintf(stderr, "quantizing %s: %s %s\n", args->Get("model").c_str(), quant::WeightMethodName(options.method),
               scheme.c_str());
  absl::StatusOr<quant::LlamaQuantReport> report = quant::QuantizeLlamaModel(
      args->Get("model"), calibration, options, args->Get("o"),
      [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });
  if (!report.ok()) return cli::Fail(cmd, report.status());

  const char* what = report->output_errors ? "relative output error" : "relative weight error";
  std::printf("%-24s %6s %6s  %-10s %s\n", "tensor", "rows", "cols", what, "note");
  double worst = 0, sum = 0;
  std::string worst_name;
  for (const quant::LinearReport& r : report->linears) {
    std::printf("%-24s %6lld %6lld  %.3e  %s\n", r.name.c_str(), static_cast<long long>(r.rows),
                static_cast<long long>(r.cols), r.rel_error, r.note.c_str());
    sum += r.rel_error;
    if (r.rel_error >= worst) {
      worst = r.rel_error;
      worst_name = r.name;
    }
  }
  std::printf("%zu matrices, mean %s %.3e, worst %.3e (%s)\n", report->linears.size(), what,
              report->linears.empty() ? 0.0 : sum / report->linears.size(), worst, worst_name.c_str());
  if (report->output_head) {
    std::printf("output head %s (%lld x %lld): %s, relative weight error %.3e\n", report->output_head->name.c_str(),
                static_cast<long long>(report->output_head->rows), static_cast<long long>(report->output_head->cols),
                report->output_head->note.c_str(), report->output_head->rel_error);
  }
  std::printf("quantized in %.2f s -> %s\n", report->seconds, args->Get("o").c_str());
  return 0;
}

}  // namespace tessel
