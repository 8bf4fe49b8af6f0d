// `tessel generate`, `perplexity`, `logits` and `serve`: Llama-family models from GGUF or safetensors.
// (serve's engine and HTTP endpoints live in llm/server; this file only reads flags and starts them.)
#include "cli/commands.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/cli.h"
#include "graph/npy.h"
#include "graph/tensor.h"
#include "kernels/cpu/cpu_features.h"
#include "llm/evaluate/evaluate.h"
#include "llm/matmul/matmul.h"
#include "llm/matmul/row_dot.h"
#include "llm/model/llama_model.h"
#include "llm/model/llama_runtime.h"
#include "llm/sampling/sampler.h"
#ifndef TESSEL_NO_SERVE
#include "llm/server/engine.h"
#include "llm/server/http_server.h"
#endif
#include "support/mapped_file.h"

namespace tessel {
namespace {

using llm::KvDType;
using llm::LlamaModel;
using llm::LlamaRuntime;
using llm::RuntimeOptions;

std::string DefaultThreads() { return std::to_string(std::max(1u, std::thread::hardware_concurrency())); }

const cli::FlagSpec kModelFlag{"model", "PATH", "a .gguf file, or a Hugging Face directory (config.json, "
                                                "*.safetensors, tokenizer.json)"};
cli::FlagSpec LlmThreadsFlag() {
  return ThreadsFlag("worker threads (prefill, decode and the load-time repack)", DefaultThreads());
}
cli::FlagSpec KvTypeFlag(const char* def) { return {"kv-type", "TYPE", "KV cache storage: f16 or f32", false, def}; }
const cli::FlagSpec kCtxFlag{"ctx", "N", "context size in tokens, at most the model's context length (default: the "
                                         "model's)", false, "", cli::AtLeast(2)};
const cli::FlagSpec kMmapFlag{"mmap", "", "map the weights instead of copying them into huge-page memory "
                                          "(zero copy, less memory; decode ~25% slower)"};

struct Common {
  std::unique_ptr<LlamaModel> model;
  RuntimeOptions options;
};

// Loads the model and reads --threads, --kv-type and --ctx into runtime options.
absl::StatusOr<Common> LoadCommon(const cli::Args& args) {
  if (!args.Has("model")) return absl::InvalidArgumentError("--model is required");
  Common c;
  absl::StatusOr<int> threads = ThreadsArg(args);  // before the load, which repacks on this many threads
  if (!threads.ok()) return threads.status();
  c.options.threads = *threads;
  const std::string kv = args.Get("kv-type");
  if (kv == "f16") {
    c.options.kv_dtype = KvDType::kF16;
  } else if (kv == "f32") {
    c.options.kv_dtype = KvDType::kF32;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("--kv-type must be f16 or f32, not '", kv, "'"));
  }
  if (!args.Get("ctx").empty()) {  // perplexity gives --ctx a default
    absl::StatusOr<int64_t> ctx = args.GetInt("ctx");
    if (!ctx.ok()) return ctx.status();
    c.options.max_context = *ctx;
  }
  const auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<LlamaModel>> model = llm::LoadModel(
      args.Get("model"), args.Has("mmap") ? FileLoad::kMap : FileLoad::kHugePageCopy, c.options.threads);
  if (!model.ok()) return model.status();
  c.model = *std::move(model);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "loaded %s (%s weights; layout: %s; %s) in %.0f ms\n", c.model->source().c_str(),
               c.model->WeightTypeSummary().c_str(), c.model->WeightLayoutSummary().c_str(),
               c.model->config().ToString().c_str(), ms);
  // The model was trained on at most its context length, and the runtime sizes the KV cache and the
  // RoPE tables by --ctx: a larger --ctx is refused rather than planned. A default (perplexity's 256)
  // shrinks to a shorter model's context.
  const int64_t trained = c.model->config().context_length;
  if (c.options.max_context > trained) {
    if (args.Has("ctx")) {
      return absl::InvalidArgumentError(absl::StrCat("--ctx ", c.options.max_context,
                                                     " exceeds the model's context length of ", trained, " tokens"));
    }
    c.options.max_context = trained;
  }
  return c;
}

absl::StatusOr<std::string> PromptText(const cli::Args& args) {
  if (args.Has("prompt") == args.Has("prompt-file")) {
    return absl::InvalidArgumentError("give exactly one of --prompt and --prompt-file");
  }
  if (args.Has("prompt")) return args.Get("prompt");
  absl::StatusOr<std::string> text = ReadFileToString(args.Get("prompt-file"));
  if (!text.ok()) return absl::Status(text.status().code(), absl::StrCat("--prompt-file: ", text.status().message()));
  return text;
}

// --verbose: per weight type of the matmuls, how many matrices and MB, the kernel decode and prefill run
// (DescribeMatmul on the first matrix of the type, as loaded) and the type's share of the decode time:
// the seconds its matrix products' tasks ran on all threads (Matmul type timing), over threads x the
// decode time; the rest of a step (attention, norms, activation quantization, sampling, waiting) is
// "other".
void PrintKernelsByType(LlamaRuntime& runtime, const llm::GenerateStats& stats) {
  const LlamaModel& model = runtime.model();
  const int threads = runtime.options().threads;
  struct TypeRow {
    llm::GgmlType type;
    const llm::WeightMatrix* first = nullptr;
    int matrices = 0;
    double bytes = 0;
  };
  std::vector<TypeRow> rows;
  auto add = [&rows](const llm::WeightMatrix& m) {
    for (TypeRow& r : rows) {
      if (r.type == m.type) {
        ++r.matrices;
        r.bytes += static_cast<double>(m.bytes());
        return;
      }
    }
    rows.push_back({m.type, &m, 1, static_cast<double>(m.bytes())});
  };
  for (const llm::LlamaLayerWeights& l : model.weights().layers) {
    for (const llm::WeightMatrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) add(*m);
  }
  add(model.weights().output);
  const double step_seconds = stats.decode_seconds * threads;
  double matmul_share = 0;
  std::fprintf(stderr, "kernels by weight type (%s; decode share of %lld steps on %d thread%s):\n",
               GetCpuFeatures().ToString().c_str(), static_cast<long long>(stats.decode_steps), threads,
               threads > 1 ? "s" : "");
  for (const TypeRow& r : rows) {
    const llm::MatmulKernel decode = llm::DescribeMatmul(*r.first, 1, threads);
    const llm::MatmulKernel prefill = llm::DescribeMatmul(*r.first, std::max<int64_t>(stats.prompt_tokens, 2), threads);
    const double share = step_seconds > 0 ? runtime.matmul().TypeSeconds(r.type, true) / step_seconds : 0;
    matmul_share += share;
    std::fprintf(stderr, "  %-14s %4d matrices %8.1f MB  decode %5.1f%%  %s (%s); prefill %s (%s)\n",
                 std::string(llm::GgmlTypeName(r.type)).c_str(), r.matrices, r.bytes / 1e6, 100 * share,
                 decode.name.c_str(), llm::MatmulPathName(decode.path), prefill.name.c_str(),
                 llm::MatmulPathName(prefill.path));
  }
  std::fprintf(stderr, "  %-14s %4s          %8s  decode %5.1f%%  (attention, norms, activation quantization, sampling)\n",
               "other", "", "", 100 * std::max(0.0, 1 - matmul_share));
}

int PrintUsage(const std::string& command, const std::string& synopsis, const std::string& description,
          const std::vector<cli::FlagSpec>& flags) {
  std::fputs(cli::Usage(command, synopsis, description, flags).c_str(), stdout);
  return 0;
}

}  // namespace

cli::FlagSpec ThreadsFlag(const std::string& help, const std::string& default_value) {
  return {"threads", "N", help, false, default_value, cli::Between(1, 256)};
}

absl::StatusOr<int> ThreadsArg(const cli::Args& args) {
  absl::StatusOr<int64_t> threads = args.GetInt("threads");
  if (!threads.ok()) return threads.status();
  return static_cast<int>(*threads);
}

int GenerateCommand(int argc, char** argv) {
  const std::string cmd = "generate";
  const std::vector<cli::FlagSpec> flags = {
      kModelFlag,
      {"prompt", "TEXT", "the prompt"},
      {"prompt-file", "FILE", "read the prompt from a file"},
      {"n", "N", "tokens to generate", false, "128", cli::AtLeast(0)},
      {"temp", "T", "temperature; 0 samples greedily", false, "0.8", cli::AtLeast(0)},
      {"top-k", "K", "keep the K most likely tokens (0: off)", false, "40", cli::AtLeast(0)},
      {"top-p", "P", "keep the most likely tokens up to probability P (1: off)", false, "0.95",
       cli::Between(0, 1).ExcludingLow()},
      {"min-p", "P", "drop tokens less than P times as likely as the best (0: off)", false, "0.05", cli::Between(0, 1)},
      {"repeat-penalty", "R", "penalize the last --repeat-last-n tokens (1: off)", false, "1.0",
       cli::AtLeast(0).ExcludingLow()},
      {"repeat-last-n", "N", "tokens the repetition penalty looks back", false, "64", cli::AtLeast(0)},
      {"seed", "S", "random seed (default: random, printed)"},
      LlmThreadsFlag(),
      kMmapFlag,
      kCtxFlag,
      KvTypeFlag("f16"),
      {"verbose", "", "also print, per weight type, the matmul kernels decode and prefill run and the type's "
                      "share of the decode time"},
  };
  if (cli::WantsHelp(argc, argv)) {
    return PrintUsage(cmd, "--model M (--prompt TEXT | --prompt-file F) [-n N] [options]",
                 "Streams the prompt's continuation to stdout and ends with a line of prefill and decode speed.\n"
                 "Sampling runs repeat-penalty -> top-k -> top-p -> min-p -> temperature -> draw.",
                 flags);
  }
  absl::StatusOr<cli::Args> args = cli::Parse(cmd, flags, argc, argv);
  if (!args.ok()) return cli::Fail(cmd, args.status());
  if (!args->positional().empty()) {
    return cli::Fail(cmd, absl::InvalidArgumentError(absl::StrCat("unexpected argument '", args->positional()[0], "'")));
  }
  absl::StatusOr<std::string> prompt = PromptText(*args);
  if (!prompt.ok()) return cli::Fail(cmd, prompt.status());
  llm::SamplingParams sp;
  absl::StatusOr<int64_t> n = args->GetInt("n");
  absl::StatusOr<double> temp = args->GetDouble("temp");
  absl::StatusOr<int64_t> top_k = args->GetInt("top-k");
  absl::StatusOr<double> top_p = args->GetDouble("top-p");
  absl::StatusOr<double> min_p = args->GetDouble("min-p");
  absl::StatusOr<double> penalty = args->GetDouble("repeat-penalty");
  absl::StatusOr<int64_t> last_n = args->GetInt("repeat-last-n");
  for (const absl::Status& s : {n.status(), temp.status(), top_k.status(), top_p.status(), min_p.status(),
                                penalty.status(), last_n.status()}) {
    if (!s.ok()) return cli::Fail(cmd, s);
  }
  // Above the vocabulary, --top-k and --repeat-last-n mean every token; clamp rather than wrap in an int.
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  sp.temperature = static_cast<float>(*temp);
  sp.top_k = static_cast<int>(std::min(*top_k, kIntMax));
  sp.top_p = static_cast<float>(*top_p);
  sp.min_p = static_cast<float>(*min_p);
  sp.repeat_penalty = static_cast<float>(*penalty);
  sp.repeat_last_n = static_cast<int>(std::min(*last_n, kIntMax));
  if (args->Has("seed")) {
    absl::StatusOr<int64_t> seed = args->GetInt("seed");
    if (!seed.ok()) return cli::Fail(cmd, seed.status());
    sp.seed = static_cast<uint64_t>(*seed);
  } else {
    sp.seed = std::random_device()();
  }
  absl::StatusOr<Common> common = LoadCommon(*args);
  if (!common.ok()) return cli::Fail(cmd, common.status());
  absl::StatusOr<std::unique_ptr<llm::SamplerChain>> sampler =
      llm::SamplerChain::Create(sp, static_cast<int>(common->model->config().vocab_size));
  if (!sampler.ok()) return cli::Fail(cmd, sampler.status());
  std::fprintf(stderr, "sampling: %s\n", (*sampler)->Describe().c_str());
  common->options.max_batch = 512;
  absl::StatusOr<std::unique_ptr<LlamaRuntime>> runtime = LlamaRuntime::Create(*common->model, common->options);
  if (!runtime.ok()) return cli::Fail(cmd, runtime.status());
  std::fprintf(stderr, "memory plan: %.1f MB activations and scratch, %.1f MB KV cache (%lld tokens, %s)\n",
               (*runtime)->activation_bytes() / 1e6, (*runtime)->kv_cache().pool_bytes() / 1e6,
               static_cast<long long>((*runtime)->options().max_context),
               (*runtime)->options().kv_dtype == KvDType::kF16 ? "f16" : "f32");
  const bool verbose = args->Has("verbose");
  if (verbose) (*runtime)->matmul().EnableTypeTiming(true);
  std::fputs(prompt->c_str(), stdout);
  std::fflush(stdout);
  absl::StatusOr<llm::GenerateStats> stats =
      llm::Generate(**runtime, **sampler, *prompt, *n, [](absl::string_view piece) {
        std::fwrite(piece.data(), 1, piece.size(), stdout);
        std::fflush(stdout);
      });
  std::fputs("\n", stdout);
  if (!stats.ok()) return cli::Fail(cmd, stats.status());
  if (stats->stopped_at_eos) std::fprintf(stderr, "[end of text]\n");
  if (stats->stopped_at_context) {
    std::fprintf(stderr, "[context full after %lld tokens]\n", static_cast<long long>((*runtime)->options().max_context));
  }
  const double weight_mb = common->model->WeightBytesPerToken() / 1e6;
  // The AVX-512 GEMVs' stream layout (llm/matmul/row_dot.h), which the rate depends on.
  const int threads = common->options.threads;
  std::string layout;
  if (!common->model->weights().layers.empty()) {
    const int streams = llm::DecodeStreams(common->model->weights().layers[0].wq, threads);
    if (streams > 0) {
      layout = absl::StrFormat(" (%d streams per GEMV call%s, %s)", streams, threads > 1 ? " and thread" : "",
                               llm::DecodePrefetch(common->model->weights().layers[0].wq));
    }
  }
  std::fprintf(stderr, "decode reads %.2f MB of weights per token: %.2f GB/s%s\n", weight_mb,
               weight_mb * stats->DecodeTokensPerSecond() / 1e3, layout.c_str());
  if (verbose) PrintKernelsByType(**runtime, *stats);
  std::printf("%s\n", stats->Summary().c_str());
  return 0;
}

int PerplexityCommand(int argc, char** argv) {
  const std::string cmd = "perplexity";
  const std::vector<cli::FlagSpec> flags = {
      kModelFlag,
      {"text", "FILE", "the text to score"},
      {"ctx", "N", "tokens per chunk (BOS included), at most the model's context length", false, "256",
       cli::AtLeast(2)},
      {"start-fraction", "F", "score the text from this fraction of its bytes on", false, "0",
       cli::Between(0, 1).ExcludingHigh()},
      {"max-chunks", "N", "stop after N chunks (0: all)", false, "0", cli::AtLeast(0)},
      LlmThreadsFlag(),
      kMmapFlag,
      KvTypeFlag("f16"),
  };
  if (cli::WantsHelp(argc, argv)) {
    return PrintUsage(cmd, "--model M --text FILE [--ctx 256] [--start-fraction 0.9] [options]",
                 "Splits the text into chunks of --ctx tokens (BOS + ctx-1 text tokens), runs each in a fresh\n"
                 "context and scores every next-token prediction. Prints progress, then `perplexity: <value>`.",
                 flags);
  }
  absl::StatusOr<cli::Args> args = cli::Parse(cmd, flags, argc, argv);
  if (!args.ok()) return cli::Fail(cmd, args.status());
  if (!args->Has("text")) return cli::Fail(cmd, absl::InvalidArgumentError("--text is required"));
  absl::StatusOr<double> start = args->GetDouble("start-fraction");
  absl::StatusOr<int64_t> max_chunks = args->GetInt("max-chunks");
  if (!start.ok()) return cli::Fail(cmd, start.status());
  if (!max_chunks.ok()) return cli::Fail(cmd, max_chunks.status());
  absl::StatusOr<std::string> text = ReadFileToString(args->Get("text"));
  if (!text.ok()) return cli::Fail(cmd, text.status());
  absl::StatusOr<Common> common = LoadCommon(*args);
  if (!common.ok()) return cli::Fail(cmd, common.status());
  const int64_t ctx = common->options.max_context;
  // The text must fill a chunk before a runtime is planned for ctx tokens of logits (ctx x vocab floats).
  absl::StatusOr<std::vector<int32_t>> tokens = llm::PerplexityTokens(common->model->tokenizer(), *text, ctx, *start);
  if (!tokens.ok()) return cli::Fail(cmd, tokens.status());
  common->options.max_batch = ctx;
  common->options.all_logits = true;
  absl::StatusOr<std::unique_ptr<LlamaRuntime>> runtime = LlamaRuntime::Create(*common->model, common->options);
  if (!runtime.ok()) return cli::Fail(cmd, runtime.status());
  const auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<llm::PerplexityResult> result = llm::Perplexity(
      **runtime, *tokens, ctx, *max_chunks, [](int64_t done, int64_t total, double ppl) {
        if (done == total || done % std::max<int64_t>(1, total / 20) == 0) {
          std::fprintf(stderr, "[%lld/%lld] perplexity so far %.4f\n", static_cast<long long>(done),
                       static_cast<long long>(total), ppl);
        }
      });
  if (!result.ok()) return cli::Fail(cmd, result.status());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%lld chunks of %lld tokens, %lld predictions scored in %.2f s (%.1f tokens/s)\n",
              static_cast<long long>(result->chunks), static_cast<long long>(ctx),
              static_cast<long long>(result->tokens_scored), s, result->chunks * ctx / s);
  std::printf("perplexity: %.4f\n", result->perplexity());
  return 0;
}

int LogitsCommand(int argc, char** argv) {
  const std::string cmd = "logits";
  const std::vector<cli::FlagSpec> flags = {
      kModelFlag,
      {"prompt", "TEXT", "the prompt"},
      {"prompt-file", "FILE", "read the prompt from a file"},
      {"output", "FILE", "where to write the .npy"},
      LlmThreadsFlag(),
      kMmapFlag,
      KvTypeFlag("f32"),
  };
  if (cli::WantsHelp(argc, argv)) {
    return PrintUsage(cmd, "--model M (--prompt TEXT | --prompt-file F) --output X.npy [options]",
                 "Runs the prompt (BOS included when the vocabulary adds one) and writes the logits of every\n"
                 "position as a float32 array of shape [tokens, vocab].",
                 flags);
  }
  absl::StatusOr<cli::Args> args = cli::Parse(cmd, flags, argc, argv);
  if (!args.ok()) return cli::Fail(cmd, args.status());
  if (!args->Has("output")) return cli::Fail(cmd, absl::InvalidArgumentError("--output is required"));
  absl::StatusOr<std::string> prompt = PromptText(*args);
  if (!prompt.ok()) return cli::Fail(cmd, prompt.status());
  absl::StatusOr<Common> common = LoadCommon(*args);
  if (!common.ok()) return cli::Fail(cmd, common.status());
  const std::vector<int32_t> tokens = common->model->tokenizer().Encode(*prompt, /*add_special=*/true);
  if (tokens.empty()) return cli::Fail(cmd, absl::InvalidArgumentError("the prompt has no tokens"));
  const int64_t n = static_cast<int64_t>(tokens.size());
  // The runtime is planned for the whole prompt at once ([tokens, vocab] logits): no longer than the
  // model's context.
  if (n > common->model->config().context_length) {
    return cli::Fail(cmd, absl::InvalidArgumentError(absl::StrCat("the prompt has ", n,
                                                                  " tokens, more than the model's context length of ",
                                                                  common->model->config().context_length)));
  }
  common->options.max_context = n;
  common->options.max_batch = n;
  common->options.all_logits = true;
  absl::StatusOr<std::unique_ptr<LlamaRuntime>> runtime = LlamaRuntime::Create(*common->model, common->options);
  if (!runtime.ok()) return cli::Fail(cmd, runtime.status());
  absl::StatusOr<int> seq = (*runtime)->NewSequence();
  if (!seq.ok()) return cli::Fail(cmd, seq.status());
  absl::StatusOr<absl::Span<const float>> logits = (*runtime)->Eval(*seq, tokens);
  if (!logits.ok()) return cli::Fail(cmd, logits.status());
  const int64_t vocab = common->model->config().vocab_size;
  Tensor out(DType::kF32, {n, vocab});
  std::copy(logits->begin(), logits->end(), out.data<float>());
  if (absl::Status s = WriteNpy(args->Get("output"), out); !s.ok()) return cli::Fail(cmd, s);
  std::printf("wrote %s: logits [%lld, %lld] for %lld tokens\n", args->Get("output").c_str(),
              static_cast<long long>(n), static_cast<long long>(vocab), static_cast<long long>(n));
  return 0;
}

#ifdef TESSEL_NO_SERVE
// The aarch64 build (cli/BUILD): cpp-httplib and nlohmann/json are installed for the host only.
int ServeCommand(int argc, char** argv) {
  return cli::Fail("serve", absl::UnimplementedError("this tessel is built without serve (its HTTP and JSON "
                                                     "libraries are host-only); run serve from the host build"));
}
#else
int ServeCommand(int argc, char** argv) {
  const std::string cmd = "serve";
  const std::vector<cli::FlagSpec> flags = {
      kModelFlag,
      {"host", "ADDR", "address to listen on", false, "127.0.0.1"},
      {"port", "N", "TCP port (0: any free port, printed)", false, "8080", cli::Between(0, 65535)},
      {"parallel", "N", "requests decoded together (sequence slots; one forward pass per step for all)", false, "4",
       cli::Between(1, 256)},
      {"ctx", "N", "tokens per slot, prompt and completion together (default: the model's context; the KV pool, "
                   "sized at start, holds (--parallel + 1) x --ctx tokens: the slots and the last finished "
                   "request's prompt, kept for prefix sharing)", false, "", cli::AtLeast(2)},
      {"kv-mb", "N", "KV pool budget in MiB, at least one --ctx (default: room for --parallel + 1 full contexts); "
                     "a request waits in the queue until the blocks for its prompt + max_tokens are free", false, "",
       cli::Between(1, 999999)},
      {"queue", "N", "requests that wait for a free slot; beyond them the server answers 503", false, "16",
       cli::Between(0, 4096)},
      {"batch", "N", "tokens per forward pass (decode rows plus a chunk of a new prompt)", false, "256",
       cli::Between(1, 8192)},
      {"chat-template", "FILE", "Jinja chat template (default: the model's tokenizer.chat_template, else ChatML)"},
      {"model-id", "NAME", "the model's name in /v1/models and responses (default: the file name)"},
      LlmThreadsFlag(),
      kMmapFlag,
      KvTypeFlag("f16"),
  };
  if (cli::WantsHelp(argc, argv)) {
    return PrintUsage(cmd, "--model M [--host 127.0.0.1] [--port 8080] [--parallel 4] [--ctx N] [options]",
                      "Serves the model over HTTP/1.1 with OpenAI's API: POST /v1/chat/completions and\n"
                      "/v1/completions (\"stream\": true for server-sent events), GET /v1/models and /health,\n"
                      "POST /tokenize and /detokenize. Up to --parallel requests decode together (continuous\n"
                      "batching); more wait in a queue of --queue, then get 503. Stops on SIGINT or SIGTERM.",
                      flags);
  }
  absl::StatusOr<cli::Args> args = cli::Parse(cmd, flags, argc, argv);
  if (!args.ok()) return cli::Fail(cmd, args.status());
  if (!args->positional().empty()) {
    return cli::Fail(cmd, absl::InvalidArgumentError(absl::StrCat("unexpected argument '", args->positional()[0], "'")));
  }
  absl::StatusOr<int64_t> port = args->GetInt("port");
  absl::StatusOr<int64_t> parallel = args->GetInt("parallel");
  absl::StatusOr<int64_t> queue = args->GetInt("queue");
  absl::StatusOr<int64_t> batch = args->GetInt("batch");
  for (const absl::Status& s : {port.status(), parallel.status(), queue.status(), batch.status()}) {
    if (!s.ok()) return cli::Fail(cmd, s);
  }
  llm::ServerOptions server;
  server.host = args->Get("host");
  server.port = static_cast<int>(*port);
  const std::string path = args->Get("model");
  server.model_id = args->Has("model-id") ? args->Get("model-id") : path.substr(path.find_last_of('/') + 1);
  if (args->Has("chat-template")) {
    absl::StatusOr<std::string> text = ReadFileToString(args->Get("chat-template"));
    if (!text.ok()) return cli::Fail(cmd, absl::Status(text.status().code(), absl::StrCat("--chat-template: ", text.status().message())));
    server.chat_template = *std::move(text);
  } else if (absl::StatusOr<std::string> t = llm::ModelChatTemplate(path); t.ok()) {
    server.chat_template = *std::move(t);
  } else {
    std::fprintf(stderr, "the model carries no chat template (tokenizer.chat_template): chat prompts use ChatML\n");
  }
  // Block the stop signals before any thread starts, so that they all inherit the mask and one thread
  // takes the signal with sigwait (stopping the listener is not async-signal-safe).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  absl::StatusOr<Common> common = LoadCommon(*args);
  if (!common.ok()) return cli::Fail(cmd, common.status());
  llm::EngineOptions eo;
  eo.parallel = static_cast<int>(*parallel);
  eo.context = common->options.max_context;
  eo.threads = common->options.threads;
  eo.kv_dtype = common->options.kv_dtype;
  eo.max_queue = static_cast<int>(*queue);
  eo.max_batch = *batch;
  if (args->Has("kv-mb")) {
    absl::StatusOr<int64_t> kv_mb = args->GetInt("kv-mb");
    if (!kv_mb.ok()) return cli::Fail(cmd, kv_mb.status());
    eo.kv_budget_bytes = static_cast<size_t>(*kv_mb) << 20;
  }
  absl::StatusOr<std::unique_ptr<llm::Engine>> engine = llm::Engine::Create(*common->model, eo);
  if (!engine.ok()) return cli::Fail(cmd, engine.status());
  absl::StatusOr<std::unique_ptr<llm::HttpServer>> http = llm::HttpServer::Create(**engine, server);
  if (!http.ok()) return cli::Fail(cmd, http.status());
  const llm::EngineStats stats = (*engine)->stats();
  std::fprintf(stderr, "KV pool: %lld blocks (%lld tokens, %.1f MiB) for %d slots of %lld tokens; batch %lld tokens; queue %d\n",
               static_cast<long long>(stats.total_kv_blocks),
               static_cast<long long>(stats.total_kv_blocks * (*engine)->kv_block_size()),
               (*engine)->kv_pool_bytes() / 1048576.0, eo.parallel, static_cast<long long>((*engine)->context()),
               static_cast<long long>(eo.max_batch), eo.max_queue);
  std::fprintf(stderr, "listening on http://%s:%d\n", server.host.c_str(), (*http)->port());
  std::fflush(stderr);
  llm::HttpServer* h = http->get();
  std::thread stopper([h, stop_signals] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    std::fprintf(stderr, "signal %d: stopping\n", sig);
    h->Stop();
  });
  absl::Status run = (*http)->Run();
  // A stop that did not come from a signal (a listener error) still has to release the stopper.
  if (stopper.joinable()) {
    pthread_kill(stopper.native_handle(), SIGTERM);
    stopper.join();
  }
  if (!run.ok()) return cli::Fail(cmd, run);
  return 0;
}
#endif  // TESSEL_NO_SERVE

}  // namespace tessel
