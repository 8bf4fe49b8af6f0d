// The C API (include/tessel/tessel.h) over the C++ runtime: handles are checked against a registry of
// live handles, every entry point catches every exception, and absl::Status becomes a tessel_status
// plus a message for the calling thread.
#include "tessel/tessel.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "artifact/artifact.h"
#include "graph/dtype.h"
#include "graph/tensor.h"
#include "llm/model/llama_model.h"
#include "llm/model/llama_runtime.h"
#include "llm/sampling/sampler.h"
#include "runtime/executor.h"
#include "support/mapped_file.h"

struct tessel_model {
  std::shared_ptr<const tessel::CompiledModel> model;
};

struct tessel_session {
  std::shared_ptr<const tessel::CompiledModel> model;
  std::unique_ptr<tessel::Session> session;
  std::vector<const void*> bound_inputs;  // per input: the caller's buffer, or null
  std::vector<bool> runtime_inputs;       // per input: the caller fills the arena slot itself
  std::vector<void*> bound_outputs;       // per output: where each run copies it, or null
  std::string last_error;
};

struct tessel_llm {
  std::unique_ptr<tessel::llm::LlamaModel> model;
  std::unique_ptr<tessel::llm::LlamaRuntime> runtime;
  int64_t max_context = 0;
  absl::Mutex mu;  // one forward pass at a time: the runtime's activations are shared
  int live_sequences = 0;
};

struct tessel_sequence {
  tessel_llm* llm = nullptr;
  int seq = -1;
  std::vector<int32_t> history;  // reserved for the whole context at creation
  std::vector<float> logits;     // [vocab], a copy: the runtime's buffer belongs to its next pass
  bool has_logits = false;
  std::unique_ptr<tessel::llm::SamplerChain> sampler;
  tessel_sampler_config sampler_config{};
};

namespace {

using tessel::CompiledModel;
using tessel::DType;
using tessel::Session;
using tessel::Tensor;

thread_local std::string tls_error;

enum class Kind { kModel, kSession, kLlm, kSequence };

const char* KindName(Kind k) {
  switch (k) {
    case Kind::kModel: return "tessel_model";
    case Kind::kSession: return "tessel_session";
    case Kind::kLlm: return "tessel_llm";
    case Kind::kSequence: return "tessel_sequence";
  }
  return "handle";
}

// Every live handle and its kind: a freed, forged or wrong-kind pointer is found out before it is
// dereferenced. One lock and one lookup per call, no allocation.
class Registry {
 public:
  void Add(const void* p, Kind k) {
    absl::MutexLock lock(&mu_);
    live_[p] = k;
  }
  void Remove(const void* p) {
    absl::MutexLock lock(&mu_);
    live_.erase(p);
  }
  absl::Status Check(const void* p, Kind k, const char* arg) {
    if (p == nullptr) return absl::InvalidArgumentError(absl::StrCat(arg, " is null"));
    absl::MutexLock lock(&mu_);
    auto it = live_.find(p);
    if (it == live_.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(arg, " is not a live ", KindName(k), " (freed, never created, or corrupted)"));
    }
    if (it->second != k) {
      return absl::InvalidArgumentError(
          absl::StrCat(arg, " is a ", KindName(it->second), ", not a ", KindName(k)));
    }
    return absl::OkStatus();
  }

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<const void*, Kind> live_;
};

Registry& Handles() {
  static Registry* registry = new Registry;  // never destroyed: handles may be freed during exit
  return *registry;
}

tessel_status ToCode(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk: return TESSEL_OK;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kAlreadyExists: return TESSEL_INVALID_ARGUMENT;
    case absl::StatusCode::kNotFound: return TESSEL_NOT_FOUND;
    case absl::StatusCode::kOutOfRange: return TESSEL_OUT_OF_RANGE;
    case absl::StatusCode::kFailedPrecondition: return TESSEL_FAILED_PRECONDITION;
    case absl::StatusCode::kResourceExhausted: return TESSEL_RESOURCE_EXHAUSTED;
    case absl::StatusCode::kUnimplemented: return TESSEL_UNIMPLEMENTED;
    case absl::StatusCode::kDataLoss: return TESSEL_DATA_LOSS;
    case absl::StatusCode::kCancelled: return TESSEL_CANCELLED;
    default: return TESSEL_INTERNAL;
  }
}

tessel_status Fail(const char* fn, tessel_status code, absl::string_view message, std::string* also = nullptr) {
  try {
    tls_error = absl::StrCat(fn, ": ", message);
    if (also != nullptr) *also = tls_error;
  } catch (...) {
    // Out of memory for the message itself: the code still says what happened.
  }
  return code;
}

// Runs `body` (returning absl::Status) with every exception caught; failures are recorded for the
// thread and, when given, the session.
template <typename F>
tessel_status Guard(const char* fn, F&& body, std::string* session_error = nullptr) {
  try {
    absl::Status s = body();
    if (s.ok()) return TESSEL_OK;
    return Fail(fn, ToCode(s.code()), s.message(), session_error);
  } catch (const std::bad_alloc&) {
    return Fail(fn, TESSEL_RESOURCE_EXHAUSTED, "out of memory", session_error);
  } catch (const std::exception& e) {
    return Fail(fn, TESSEL_INTERNAL, absl::StrCat("unexpected C++ exception: ", e.what()), session_error);
  } catch (...) {
    return Fail(fn, TESSEL_INTERNAL, "unexpected C++ exception", session_error);
  }
}

absl::Status NotNull(const void* p, const char* arg) {
  return p ? absl::OkStatus() : absl::InvalidArgumentError(absl::StrCat(arg, " is null"));
}

#define TESSEL_RETURN_IF_ERROR(expr)   \
  do {                                 \
    absl::Status _s = (expr);          \
    if (!_s.ok()) return _s;           \
  } while (0)

// The body of a getter: checks the handle and `out`, then *out = get(*handle).
template <typename H, typename T, typename GetFn>
tessel_status Get(const char* fn, const H* handle, Kind kind, const char* arg, T* out, GetFn get) {
  return Guard(fn, [&]() -> absl::Status {
    TESSEL_RETURN_IF_ERROR(Handles().Check(handle, kind, arg));
    TESSEL_RETURN_IF_ERROR(NotNull(out, "out"));
    *out = get(*handle);
    return absl::OkStatus();
  });
}

absl::StatusOr<tessel_dtype> ToCDType(DType t) {
  switch (t) {
    case DType::kF32: return TESSEL_DTYPE_F32;
    case DType::kF16: return TESSEL_DTYPE_F16;
    case DType::kBF16: return TESSEL_DTYPE_BF16;
    case DType::kI8: return TESSEL_DTYPE_I8;
    case DType::kU8: return TESSEL_DTYPE_U8;
    case DType::kI32: return TESSEL_DTYPE_I32;
    case DType::kI64: return TESSEL_DTYPE_I64;
    case DType::kBool: return TESSEL_DTYPE_BOOL;
    case DType::kF64: return TESSEL_DTYPE_F64;
    default: break;
  }
  return absl::UnimplementedError(absl::StrCat("dtype ", tessel::DTypeName(t), " has no C API equivalent"));
}

std::string ShapeString(const int64_t* shape, int32_t rank) {
  return absl::StrCat("[", absl::StrJoin(shape, shape + rank, ","), "]");
}

// Input / output tensors as the plan declares them (dtype and shape), without a session.
absl::Status PlanTensorInfo(const CompiledModel& m, int plan_index, tessel_tensor_info* out) {
  const tessel::artifact::Tensor& t = m.plan().tensors(plan_index);
  absl::StatusOr<tessel_dtype> dtype = ToCDType(static_cast<DType>(t.dtype()));
  if (!dtype.ok()) return dtype.status();
  if (t.shape_size() > TESSEL_MAX_RANK) {
    return absl::UnimplementedError(absl::StrCat("tensor '", t.name(), "' has rank ", t.shape_size(),
                                                 ", above TESSEL_MAX_RANK"));
  }
  std::memset(out, 0, sizeof(*out));
  out->name = t.name().c_str();
  out->dtype = *dtype;
  out->rank = t.shape_size();
  int64_t elements = 1;
  for (int i = 0; i < t.shape_size(); ++i) {
    out->shape[i] = t.shape(i);
    elements *= t.shape(i);
  }
  out->bytes = tessel::DTypeStorageBytes(static_cast<DType>(t.dtype()), elements);
  return absl::OkStatus();
}

absl::Status CheckIndex(int32_t index, int count, const char* what) {
  if (index < 0 || index >= count) {
    return absl::OutOfRangeError(absl::StrCat(what, " index ", index, " is out of range (the model has ", count, ")"));
  }
  return absl::OkStatus();
}

tessel::llm::SamplingParams ToParams(const tessel_sampler_config& c) {
  tessel::llm::SamplingParams p;
  p.temperature = c.temperature;
  p.top_k = c.top_k;
  p.top_p = c.top_p;
  p.min_p = c.min_p;
  p.repeat_penalty = c.repeat_penalty;
  p.repeat_last_n = c.repeat_last_n;
  p.seed = c.seed;
  return p;
}

bool SameConfig(const tessel_sampler_config& a, const tessel_sampler_config& b) {
  return a.temperature == b.temperature && a.top_k == b.top_k && a.top_p == b.top_p && a.min_p == b.min_p &&
         a.repeat_penalty == b.repeat_penalty && a.repeat_last_n == b.repeat_last_n && a.seed == b.seed;
}

// With llm->mu held.
absl::Status EvalLocked(tessel_sequence* s, const int32_t* tokens, int32_t count) {
  tessel_llm* llm = s->llm;
  if (static_cast<int64_t>(s->history.size()) + count > llm->max_context) {
    return absl::OutOfRangeError(absl::StrCat("the sequence holds ", s->history.size(), " tokens; ", count,
                                              " more exceed its context of ", llm->max_context));
  }
  const int32_t vocab = static_cast<int32_t>(llm->model->config().vocab_size);
  for (int32_t i = 0; i < count; ++i) {
    if (tokens[i] < 0 || tokens[i] >= vocab) {
      return absl::InvalidArgumentError(
          absl::StrCat("token ", i, " (id ", tokens[i], ") is outside the vocabulary of ", vocab));
    }
  }
  absl::StatusOr<absl::Span<const float>> logits = llm->runtime->Eval(s->seq, absl::MakeConstSpan(tokens, count));
  if (!logits.ok()) return logits.status();
  std::copy(logits->end() - vocab, logits->end(), s->logits.begin());
  s->history.insert(s->history.end(), tokens, tokens + count);
  s->has_logits = true;
  return absl::OkStatus();
}

// With llm->mu held: samples from the sequence's logits, appends the token and runs it.
absl::Status DecodeLocked(tessel_sequence* s, const tessel_sampler_config& config, int32_t* token) {
  if (!s->has_logits) return absl::FailedPreconditionError("no logits yet: prefill at least one token first");
  if (!s->sampler || !SameConfig(config, s->sampler_config)) {
    absl::StatusOr<std::unique_ptr<tessel::llm::SamplerChain>> sampler = tessel::llm::SamplerChain::Create(
        ToParams(config), static_cast<int>(s->llm->model->config().vocab_size));
    if (!sampler.ok()) return sampler.status();
    s->sampler = *std::move(sampler);
    s->sampler_config = config;
  }
  const int32_t next = s->sampler->Sample(s->logits, s->history);
  TESSEL_RETURN_IF_ERROR(EvalLocked(s, &next, 1));
  *token = next;
  return absl::OkStatus();
}

absl::Status CreateSequence(tessel_llm* llm, tessel_sequence** out) {
  auto s = std::make_unique<tessel_sequence>();
  s->llm = llm;
  s->history.reserve(static_cast<size_t>(llm->max_context));
  s->logits.assign(static_cast<size_t>(llm->model->config().vocab_size), 0.0f);
  {
    absl::MutexLock lock(&llm->mu);
    absl::StatusOr<int> seq = llm->runtime->NewSequence();
    if (!seq.ok()) {
      return absl::ResourceExhaustedError(absl::StrCat(seq.status().message(), " (raise max_sequences, now ",
                                                       llm->runtime->options().max_sequences, ")"));
    }
    s->seq = *seq;
    ++llm->live_sequences;
  }
  *out = s.release();
  Handles().Add(*out, Kind::kSequence);
  return absl::OkStatus();
}

absl::Status FreeSequence(tessel_sequence* s) {
  Handles().Remove(s);
  std::unique_ptr<tessel_sequence> owned(s);
  absl::MutexLock lock(&s->llm->mu);
  --s->llm->live_sequences;
  return s->llm->runtime->EndSequence(s->seq);
}

}  // namespace

extern "C" {

int32_t tessel_version(void) { return TESSEL_VERSION_NUMBER; }

const char* tessel_version_string(void) {
#define TESSEL_STR2(x) #x
#define TESSEL_STR(x) TESSEL_STR2(x)
  return TESSEL_STR(TESSEL_VERSION_MAJOR) "." TESSEL_STR(TESSEL_VERSION_MINOR) "." TESSEL_STR(TESSEL_VERSION_PATCH);
#undef TESSEL_STR
#undef TESSEL_STR2
}

const char* tessel_status_name(tessel_status status) {
  switch (status) {
    case TESSEL_OK: return "TESSEL_OK";
    case TESSEL_INVALID_ARGUMENT: return "TESSEL_INVALID_ARGUMENT";
    case TESSEL_NOT_FOUND: return "TESSEL_NOT_FOUND";
    case TESSEL_OUT_OF_RANGE: return "TESSEL_OUT_OF_RANGE";
    case TESSEL_FAILED_PRECONDITION: return "TESSEL_FAILED_PRECONDITION";
    case TESSEL_RESOURCE_EXHAUSTED: return "TESSEL_RESOURCE_EXHAUSTED";
    case TESSEL_UNIMPLEMENTED: return "TESSEL_UNIMPLEMENTED";
    case TESSEL_DATA_LOSS: return "TESSEL_DATA_LOSS";
    case TESSEL_INTERNAL: return "TESSEL_INTERNAL";
    case TESSEL_CANCELLED: return "TESSEL_CANCELLED";
  }
  return "TESSEL_UNKNOWN_STATUS";
}

const char* tessel_last_error(void) { return tls_error.c_str(); }

const char* tessel_dtype_name(tessel_dtype dtype) {
  switch (dtype) {
    case TESSEL_DTYPE_F32: return "f32";
    case TESSEL_DTYPE_F16: return "f16";
    case TESSEL_DTYPE_BF16: return "bf16";
    case TESSEL_DTYPE_I8: return "i8";
    case TESSEL_DTYPE_U8: return "u8";
    case TESSEL_DTYPE_I32: return "i32";
    case TESSEL_DTYPE_I64: return "i64";
    case TESSEL_DTYPE_BOOL: return "bool";
    case TESSEL_DTYPE_F64: return "f64";
  }
  return "?";
}

/* ------------------------------------------------------------------------------------------ CNN */

tessel_status tessel_model_load(const char* path, tessel_model** out) {
  return Guard(__func__, [&]() -> absl::Status {
    TESSEL_RETURN_IF_ERROR(NotNull(path, "path"));
    TESSEL_RETURN_IF_ERROR(NotNull(out, "out"));
    *out = nullptr;
    absl::StatusOr<std::shared_ptr<const CompiledModel>> m = CompiledModel::Load(path);
    if (!m.ok()) return m.status();
    auto handle = std::make_unique<tessel_model>();
    handle->model = *std::move(m);
    *out = handle.release();
    Handles().Add(*out, Kind::kModel);
    return absl::OkStatus();
  });
}

tessel_status tessel_model_load_from_memory(const void* data, size_t size, tessel_model** out) {
  return Guard(__func__, [&]() -> absl::Status {
    TESSEL_RETURN_IF_ERROR(NotNull(data, "data"));
    TESSEL_RETURN_IF_ERROR(NotNull(out, "out"));
    *out = nullptr;
    absl::StatusOr<std::shared_ptr<tessel::Artifact>> a = tessel::Artifact::FromBytes(
        absl::string_view(static_cast<const char*>(data), size), {}, "artifact in caller memory");
    if (!a.ok()) return a.status();
    absl::StatusOr<std::shared_ptr<const CompiledModel>> m = CompiledModel::FromArtifact(*std::move(a));
    if (!m.ok()) return m.status();
    auto handle = std::make_unique<tessel_model>();
    handle->model = *std::move(m);
    *out = handle.release();
    Handles().Add(*out, Kind::kModel);
    return absl::OkStatus();
  });
}

tessel_status tessel_model_free(tessel_model* model) {
  return Guard(__func__, [&]() -> absl::Status {
    if (model == nullptr) return absl::OkStatus();
    TESSEL_RETURN_IF_ERROR(Handles().Check(model, Kind::kModel, "model"));
    Handles().Remove(model);
    delete model;
    return absl::OkStatus();
  });
}

tessel_status tessel_model_num_inputs(const tessel_model* model, int32_t* out) {
  return Get(__func__, model, Kind::kModel, "model", out,
             [](const tessel_model& h) { return h.model->num_inputs(); });
}

tessel_status tessel_model_num_outputs(const tessel_model* model, int32_t* out) {
  return Get(__func__, model, Kind::kModel, "model", out,
             [](const tessel_model& h) { return h.model->num_outputs(); });
}

tessel_status tessel_model_input_info(const tessel_model* model, int32_t index, tessel_tensor_info* out) {
  return Guard(__func__, [&]() -> absl::Status {
    TESSEL_RETURN_IF_ERROR(Handles().Check(model, Kind::kModel, "model"));
    TESSEL_RETURN_IF_ERROR(NotNull(out, "out"));
    TESSEL_RETURN_IF_ERROR(CheckIndex(index, model->model->num_inputs(), "input"));
    return PlanTensorInfo(*model->model, model->model->plan().inputs(index), out);
  });
}

tessel_status tessel_model_output_info(const tessel_model* model, int32_t index, tessel_tensor_info* out) {
  return Guard(__func__, [&]() -> absl::Status {
    TESSEL_RETURN_IF_ERROR(Handles().Check(model, Kind::kModel, "model"));
    TESSEL_RETURN_IF_ERROR(NotNull(out, "out"));
    TESSEL_RETURN_IF_ERROR(CheckIndex(index, model->model->num_outputs(), "output"));
    return PlanTensorInfo(*model->model, model->model->plan().outputs(index), out);
  });
}

// tessel_model_find_input / _output: the index of the input (or output) called `name`.
tessel_status FindByName(const char* fn, const tessel_model* model, const char* name, int32_t* index, bool input) {
  return Guard(fn, [&]() -> absl::Status {
    TESSEL_RETURN_IF_ERROR(Handles().Check(model, Kind::kModel, "model"));
    TESSEL_RETURN_IF_ERROR(NotNull(name, "name"));
    TESSEL_RETURN_IF_ERROR(NotNull(index, "index"));
    const CompiledModel& m = *model->model;
    const int count = input ? m.num_inputs() : m.num_outputs();
    std::vector<std::string> names;
    for (int i = 0; i < count; ++i) {
      const std::string& n = input ? m.input_name(i) : m.output_name(i);
      if (n == name) {
        *index = i;
        return absl::OkStatus();
      }
      names.push_back(n);
    }
    const char* what = input ? "input" : "output";
    return absl::NotFoundError(absl::StrCat("no ", what, " '", name, "' (", what, "s: ", absl::StrJoin(names, ", "), ")"));
  });
}

tessel_status tessel_model_find_input(const tessel_model* model, const char* name, int32_t* index) {
  return FindByName(__func__, model, name, index, /*input=*/true);
}

tessel_status tessel_model_find_output(const tessel_model* model, const char* name, int32_t* index) {
  return FindByName(__func__, model, name, index, /*input=*/false);
}

void tessel_session_options_init(tessel_session_options* options) {
  if (options == nullptr) return;
  options->num_threads = 1;
  options->spin_workers = 0;
  options->force_reference = 0;
}

tessel_status tessel_session_create(const tessel_model* model, const tessel_session_options* options,
                                    tessel_session** out) {
  return Guard(__func__, [&]() -> absl::Status {
    TESSEL_RETURN_IF_ERROR(Handles().Check(model, Kind::kModel, "model"));
    TESSEL_RETURN_IF_ERROR(NotNull(out, "out"));
    *out = nullptr;
    tessel::SessionOptions so;
    if (options != nullptr) {
      if (options->num_threads < 1 || options->num_threads > 256) {
        return absl::InvalidArgumentError(
            absl::StrCat("options->num_threads is ", options->num_threads, "; expected 1 to 256"));
      }
      so.num_threads = options->num_threads;
      switch (options->spin_workers) {
        case TESSEL_WORKERS_ADAPTIVE:
          so.worker_wait = tessel::WorkerWait::kAdaptive;
          break;
        case TESSEL_WORKERS_SPIN:
          so.worker_wait = tessel::WorkerWait::kSpin;
          break;
        case TESSEL_WORKERS_SLEEP:
          so.worker_wait = tessel::WorkerWait::kSleep;
          break;
        default:
          return absl::InvalidArgumentError(absl::StrCat("options->spin_workers is ", options->spin_workers,
                                                         "; expected TESSEL_WORKERS_ADAPTIVE (0), _SPIN (1) or _SLEEP (2)"));
      }
      so.force_reference = options->force_reference != 0;
    }
    absl::StatusOr<std::unique_ptr<Session>> session = Session::Create(model->model, so);
    if (!session.ok()) return session.status();
    auto handle = std::make_unique<tessel_session>();
    handle->model = model->model;
    handle->session = *std::move(session);
    handle->bound_inputs.assign(model->model->num_inputs(), nullptr);
    handle->runtime_inputs.assign(model->model->num_inputs(), false);
    handle->bound_outputs.assign(model->model->num_outputs(), nullptr);
    handle->last_error.reserve(256);
    *out = handle.release();
    Handles().Add(*out, Kind::kSession);
    return absl::OkStatus();
  });
}

tessel_status tessel_session_free(tessel_session* session) {
  return Guard(__func__, [&]() -> absl::Status {
    if (session == nullptr) return absl::OkStatus();
    TESSEL_RETURN_IF_ERROR(Handles().Check(session, Kind::kSession, "session"));
    Handles().Remove(session);
    delete session;
    return absl::OkStatus();
  });
}

const char* tessel_session_last_error(const tessel_session* session) {
  if (!Handles().Check(session, Kind::kSession, "session").ok()) return "session is not a live tessel_session";
  return session->last_error.c_str();
}

tessel_status tessel_session_bind_input(tessel_session* session, int32_t index, const void* data, size_t bytes,
                                        tessel_dtype dtype, const int64_t* shape, int32_t rank) {
  {
    absl::Status live = Handles().Check(session, Kind::kSession, "session");
    if (!live.ok()) return Fail(__func__, TESSEL_INVALID_ARGUMENT, live.message());
  }
  return Guard(
      __func__,
      [&]() -> absl::Status {
        TESSEL_RETURN_IF_ERROR(CheckIndex(index, session->model->num_inputs(), "input"));
        TESSEL_RETURN_IF_ERROR(NotNull(data, "data"));
        if (rank > 0) TESSEL_RETURN_IF_ERROR(NotNull(shape, "shape"));
        const Tensor& slot = session->session->input(index);
        const std::string& name = session->model->input_name(index);
        absl::StatusOr<tessel_dtype> want = ToCDType(slot.dtype());
        if (!want.ok()) return want.status();
        if (dtype != *want) {
          return absl::InvalidArgumentError(absl::StrCat("input '", name, "' has dtype ", tessel_dtype_name(*want),
                                                         ", got ", tessel_dtype_name(dtype)));
        }
        bool same = rank == slot.rank();
        for (int i = 0; same && i < rank; ++i) same = shape[i] == slot.shape()[i];
        if (!same) {
          return absl::InvalidArgumentError(absl::StrCat(
              "input '", name, "' has shape ", ShapeString(slot.shape().data(), slot.rank()), ", got ",
              rank < 0 || rank > 64 ? absl::StrCat("rank ", rank) : ShapeString(shape, rank)));
        }
        if (bytes != slot.byte_size()) {
          return absl::InvalidArgumentError(
              absl::StrCat("input '", name, "' takes ", slot.byte_size(), " bytes, got a buffer of ", bytes));
        }
        session->bound_inputs[index] = data;
        session->runtime_inputs[index] = false;
        return absl::OkStatus();
      },
      &session->last_error);
}

tessel_status tessel_session_input_buffer(tessel_session* session, int32_t index, void** data, size_t* bytes) {
  {
    absl::Status live = Handles().Check(session, Kind::kSession, "session");
    if (!live.ok()) return Fail(__func__, TESSEL_INVALID_ARGUMENT, live.message());
  }
  return Guard(
      __func__,
      [&]() -> absl::Status {
        TESSEL_RETURN_IF_ERROR(CheckIndex(index, session->model->num_inputs(), "input"));
        TESSEL_RETURN_IF_ERROR(NotNull(data, "data"));
        Tensor& slot = session->session->input(index);
        *data = slot.raw_data();
        if (bytes != nullptr) *bytes = slot.byte_size();
        session->bound_inputs[index] = nullptr;
        session->runtime_inputs[index] = true;
        return absl::OkStatus();
      },
      &session->last_error);
}

tessel_status tessel_session_bind_output(tessel_session* session, int32_t index, void* data, size_t bytes) {
  {
    absl::Status live = Handles().Check(session, Kind::kSession, "session");
    if (!live.ok()) return Fail(__func__, TESSEL_INVALID_ARGUMENT, live.message());
  }
  return Guard(
      __func__,
      [&]() -> absl::Status {
        TESSEL_RETURN_IF_ERROR(CheckIndex(index, session->model->num_outputs(), "output"));
        TESSEL_RETURN_IF_ERROR(NotNull(data, "data"));
        const Tensor& out = session->session->output(index);
        if (bytes != out.byte_size()) {
          return absl::InvalidArgumentError(absl::StrCat("output '", session->model->output_name(index), "' is ",
                                                         out.byte_size(), " bytes, got a buffer of ", bytes));
        }
        session->bound_outputs[index] = data;
        return absl::OkStatus();
      },
      &session->last_error);
}

tessel_status tessel_session_output_buffer(const tessel_session* session, int32_t index, const void** data,
                                           size_t* bytes) {
  return Guard(__func__, [&]() -> absl::Status {
    TESSEL_RETURN_IF_ERROR(Handles().Check(session, Kind::kSession, "session"));
    TESSEL_RETURN_IF_ERROR(CheckIndex(index, session->model->num_outputs(), "output"));
    TESSEL_RETURN_IF_ERROR(NotNull(data, "data"));
    const Tensor& out = session->session->output(index);
    *data = out.raw_data();
    if (bytes != nullptr) *bytes = out.byte_size();
    return absl::OkStatus();
  });
}

tessel_status tessel_session_run(tessel_session* session) {
  {
    absl::Status live = Handles().Check(session, Kind::kSession, "session");
    if (!live.ok()) return Fail(__func__, TESSEL_INVALID_ARGUMENT, live.message());
  }
  return Guard(
      __func__,
      [&]() -> absl::Status {
        const int n = session->model->num_inputs();
        for (int i = 0; i < n; ++i) {
          if (session->bound_inputs[i] == nullptr && !session->runtime_inputs[i]) {
            return absl::FailedPreconditionError(absl::StrCat(
                "input '", session->model->input_name(i),
                "' has no data: bind a buffer (tessel_session_bind_input) or fill tessel_session_input_buffer"));
          }
        }
        for (int i = 0; i < n; ++i) {
          if (session->bound_inputs[i] != nullptr) {
            Tensor& slot = session->session->input(i);
            std::memcpy(slot.raw_data(), session->bound_inputs[i], slot.byte_size());
          }
        }
        TESSEL_RETURN_IF_ERROR(session->session->Run());
        for (int i = 0; i < session->model->num_outputs(); ++i) {
          if (session->bound_outputs[i] != nullptr) {
            const Tensor& out = session->session->output(i);
            std::memcpy(session->bound_outputs[i], out.raw_data(), out.byte_size());
          }
        }
        return absl::OkStatus();
      },
      &session->last_error);
}

tessel_status tessel_session_set_profiling(tessel_session* session, int32_t enabled) {
  return Guard(__func__, [&]() -> absl::Status {
    TESSEL_RETURN_IF_ERROR(Handles().Check(session, Kind::kSession, "session"));
    session->session->set_profile(enabled != 0);
    return absl::OkStatus();
  });
}

tessel_status tessel_session_num_profile_entries(const tessel_session* session, int32_t* out) {
  return Get(__func__, session, Kind::kSession, "session", out,
             [](const tessel_session& h) { return static_cast<int32_t>(h.session->profile().size()); });
}

tessel_status tessel_session_profile_entry(const tessel_session* session, int32_t index, tessel_op_profile* out) {
  return Guard(__func__, [&]() -> absl::Status {
    TESSEL_RETURN_IF_ERROR(Handles().Check(session, Kind::kSession, "session"));
    TESSEL_RETURN_IF_ERROR(NotNull(out, "out"));
    const std::vector<tessel::OpProfile>& profile = session->session->profile();
    if (index < 0 || index >= static_cast<int32_t>(profile.size())) {
      return absl::OutOfRangeError(absl::StrCat("profile entry ", index, " is out of range (", profile.size(),
                                                " entries; enable profiling and run first)"));
    }
    const tessel::OpProfile& p = profile[index];
    out->name = p.name.c_str();
    out->kernel = p.kernel.c_str();
    out->milliseconds = p.milliseconds;
    out->bytes = p.bytes;
    return absl::OkStatus();
  });
}

/* ------------------------------------------------------------------------------------------ LLM */

void tessel_llm_options_init(tessel_llm_options* options) {
  if (options == nullptr) return;
  options->threads = 1;
  options->max_context = 0;
  options->max_sequences = 1;
  options->max_batch = 64;
  options->kv_f32 = 0;
  options->mmap = 0;
}

void tessel_sampler_config_init(tessel_sampler_config* config) {
  if (config == nullptr) return;
  const tessel::llm::SamplingParams p;
  config->temperature = p.temperature;
  config->top_k = p.top_k;
  config->top_p = p.top_p;
  config->min_p = p.min_p;
  config->repeat_penalty = p.repeat_penalty;
  config->repeat_last_n = p.repeat_last_n;
  config->seed = p.seed;
}

tessel_status tessel_llm_load(const char* path, const tessel_llm_options* options, tessel_llm** out) {
  return Guard(__func__, [&]() -> absl::Status {
    TESSEL_RETURN_IF_ERROR(NotNull(path, "path"));
    TESSEL_RETURN_IF_ERROR(NotNull(out, "out"));
    *out = nullptr;
    tessel_llm_options o;
    tessel_llm_options_init(&o);
    if (options != nullptr) o = *options;
    if (o.threads < 1 || o.threads > 256) {
      return absl::InvalidArgumentError(absl::StrCat("options->threads is ", o.threads, "; expected 1 to 256"));
    }
    if (o.max_context < 0 || o.max_sequences < 1 || o.max_batch < 1) {
      return absl::InvalidArgumentError(absl::StrCat("options: max_context ", o.max_context, " (>= 0), max_sequences ",
                                                     o.max_sequences, " (>= 1), max_batch ", o.max_batch, " (>= 1)"));
    }
    absl::StatusOr<std::unique_ptr<tessel::llm::LlamaModel>> model = tessel::llm::LoadModel(
        path, o.mmap ? tessel::FileLoad::kMap : tessel::FileLoad::kHugePageCopy, o.threads);
    if (!model.ok()) return model.status();
    auto handle = std::make_unique<tessel_llm>();
    handle->model = *std::move(model);
    const int64_t trained = handle->model->config().context_length;
    if (o.max_context > trained) {
      return absl::InvalidArgumentError(absl::StrCat("options->max_context ", o.max_context,
                                                     " exceeds the model's context length of ", trained));
    }
    tessel::llm::RuntimeOptions ro;
    ro.max_context = o.max_context > 0 ? o.max_context : trained;
    ro.max_batch = o.max_batch;
    ro.max_sequences = o.max_sequences;
    ro.threads = o.threads;
    ro.kv_dtype = o.kv_f32 ? tessel::llm::KvDType::kF32 : tessel::llm::KvDType::kF16;
    absl::StatusOr<std::unique_ptr<tessel::llm::LlamaRuntime>> runtime =
        tessel::llm::LlamaRuntime::Create(*handle->model, ro);
    if (!runtime.ok()) return runtime.status();
    handle->runtime = *std::move(runtime);
    handle->max_context = ro.max_context;
    *out = handle.release();
    Handles().Add(*out, Kind::kLlm);
    return absl::OkStatus();
  });
}

tessel_status tessel_llm_free(tessel_llm* llm) {
  return Guard(__func__, [&]() -> absl::Status {
    if (llm == nullptr) return absl::OkStatus();
    TESSEL_RETURN_IF_ERROR(Handles().Check(llm, Kind::kLlm, "llm"));
    {
      absl::MutexLock lock(&llm->mu);
      if (llm->live_sequences > 0) {
        return absl::FailedPreconditionError(
            absl::StrCat(llm->live_sequences, " sequence(s) of this model are alive: free them first"));
      }
    }
    Handles().Remove(llm);
    delete llm;
    return absl::OkStatus();
  });
}

tessel_status tessel_llm_vocab_size(const tessel_llm* llm, int32_t* out) {
  return Get(__func__, llm, Kind::kLlm, "llm", out,
             [](const tessel_llm& h) { return static_cast<int32_t>(h.model->config().vocab_size); });
}

tessel_status tessel_llm_context_length(const tessel_llm* llm, int32_t* out) {
  return Get(__func__, llm, Kind::kLlm, "llm", out,
             [](const tessel_llm& h) { return static_cast<int32_t>(h.max_context); });
}

tessel_status tessel_llm_special_tokens(const tessel_llm* llm, int32_t* bos, int32_t* eos) {
  return Guard(__func__, [&]() -> absl::Status {
    TESSEL_RETURN_IF_ERROR(Handles().Check(llm, Kind::kLlm, "llm"));
    if (bos != nullptr) *bos = llm->model->tokenizer().bos();
    if (eos != nullptr) *eos = llm->model->tokenizer().eos();
    return absl::OkStatus();
  });
}

tessel_status tessel_llm_tokenize(const tessel_llm* llm, const char* text, size_t length, int32_t add_special,
                                  int32_t* tokens, int32_t capacity, int32_t* count) {
  return Guard(__func__, [&]() -> absl::Status {
    TESSEL_RETURN_IF_ERROR(Handles().Check(llm, Kind::kLlm, "llm"));
    if (length > 0) TESSEL_RETURN_IF_ERROR(NotNull(text, "text"));
    TESSEL_RETURN_IF_ERROR(NotNull(count, "count"));
    if (capacity < 0) return absl::InvalidArgumentError(absl::StrCat("capacity is ", capacity));
    if (capacity > 0) TESSEL_RETURN_IF_ERROR(NotNull(tokens, "tokens"));
    const std::vector<int32_t> ids =
        llm->model->tokenizer().Encode(absl::string_view(text ? text : "", length), add_special != 0);
    *count = static_cast<int32_t>(ids.size());
    std::copy_n(ids.begin(), std::min<size_t>(ids.size(), capacity), tokens);
    if (ids.size() > static_cast<size_t>(capacity)) {
      return absl::OutOfRangeError(absl::StrCat("the text has ", ids.size(), " tokens; the buffer holds ", capacity));
    }
    return absl::OkStatus();
  });
}

tessel_status tessel_llm_detokenize(const tessel_llm* llm, const int32_t* tokens, int32_t count, char* text,
                                    size_t capacity, size_t* length) {
  return Guard(__func__, [&]() -> absl::Status {
    TESSEL_RETURN_IF_ERROR(Handles().Check(llm, Kind::kLlm, "llm"));
    if (count < 0) return absl::InvalidArgumentError(absl::StrCat("count is ", count));
    if (count > 0) TESSEL_RETURN_IF_ERROR(NotNull(tokens, "tokens"));
    if (capacity > 0) TESSEL_RETURN_IF_ERROR(NotNull(text, "text"));
    const int32_t vocab = llm->model->tokenizer().vocab_size();
    for (int32_t i = 0; i < count; ++i) {
      if (tokens[i] < 0 || tokens[i] >= vocab) {
        return absl::InvalidArgumentError(
            absl::StrCat("token ", i, " (id ", tokens[i], ") is outside the vocabulary of ", vocab));
      }
    }
    const std::string s = llm->model->tokenizer().Decode(absl::MakeConstSpan(tokens, count));
    if (length != nullptr) *length = s.size();
    if (s.size() + 1 > capacity) {
      if (capacity > 0) text[0] = '\0';
      return absl::OutOfRangeError(
          absl::StrCat("the text is ", s.size(), " bytes (plus the NUL); the buffer holds ", capacity));
    }
    std::memcpy(text, s.data(), s.size());
    text[s.size()] = '\0';
    return absl::OkStatus();
  });
}

tessel_status tessel_llm_token_piece(const tessel_llm* llm, int32_t token, char* text, size_t capacity,
                                     size_t* length) {
  return Guard(__func__, [&]() -> absl::Status {
    TESSEL_RETURN_IF_ERROR(Handles().Check(llm, Kind::kLlm, "llm"));
    if (capacity > 0) TESSEL_RETURN_IF_ERROR(NotNull(text, "text"));
    const int32_t vocab = llm->model->tokenizer().vocab_size();
    if (token < 0 || token >= vocab) {
      return absl::InvalidArgumentError(absl::StrCat("token id ", token, " is outside the vocabulary of ", vocab));
    }
    const std::string s = llm->model->tokenizer().TokenPiece(token);
    if (length != nullptr) *length = s.size();
    if (s.size() + 1 > capacity) {
      if (capacity > 0) text[0] = '\0';
      return absl::OutOfRangeError(
          absl::StrCat("the piece is ", s.size(), " bytes (plus the NUL); the buffer holds ", capacity));
    }
    std::memcpy(text, s.data(), s.size());
    text[s.size()] = '\0';
    return absl::OkStatus();
  });
}

tessel_status tessel_sequence_create(tessel_llm* llm, tessel_sequence** out) {
  return Guard(__func__, [&]() -> absl::Status {
    TESSEL_RETURN_IF_ERROR(Handles().Check(llm, Kind::kLlm, "llm"));
    TESSEL_RETURN_IF_ERROR(NotNull(out, "out"));
    *out = nullptr;
    return CreateSequence(llm, out);
  });
}

tessel_status tessel_sequence_free(tessel_sequence* sequence) {
  return Guard(__func__, [&]() -> absl::Status {
    if (sequence == nullptr) return absl::OkStatus();
    TESSEL_RETURN_IF_ERROR(Handles().Check(sequence, Kind::kSequence, "sequence"));
    return FreeSequence(sequence);
  });
}

tessel_status tessel_sequence_prefill(tessel_sequence* sequence, const int32_t* tokens, int32_t count) {
  return Guard(__func__, [&]() -> absl::Status {
    TESSEL_RETURN_IF_ERROR(Handles().Check(sequence, Kind::kSequence, "sequence"));
    TESSEL_RETURN_IF_ERROR(NotNull(tokens, "tokens"));
    if (count < 1) return absl::InvalidArgumentError(absl::StrCat("count is ", count, "; expected at least 1"));
    absl::MutexLock lock(&sequence->llm->mu);
    return EvalLocked(sequence, tokens, count);
  });
}

tessel_status tessel_sequence_decode(tessel_sequence* sequence, const tessel_sampler_config* config, int32_t* token) {
  return Guard(__func__, [&]() -> absl::Status {
    TESSEL_RETURN_IF_ERROR(Handles().Check(sequence, Kind::kSequence, "sequence"));
    TESSEL_RETURN_IF_ERROR(NotNull(token, "token"));
    tessel_sampler_config c;
    tessel_sampler_config_init(&c);
    if (config != nullptr) c = *config;
    absl::MutexLock lock(&sequence->llm->mu);
    return DecodeLocked(sequence, c, token);
  });
}

tessel_status tessel_sequence_logits(const tessel_sequence* sequence, const float** logits, int32_t* vocab) {
  return Guard(__func__, [&]() -> absl::Status {
    TESSEL_RETURN_IF_ERROR(Handles().Check(sequence, Kind::kSequence, "sequence"));
    TESSEL_RETURN_IF_ERROR(NotNull(logits, "logits"));
    if (!sequence->has_logits) return absl::FailedPreconditionError("no logits yet: prefill at least one token first");
    *logits = sequence->logits.data();
    if (vocab != nullptr) *vocab = static_cast<int32_t>(sequence->logits.size());
    return absl::OkStatus();
  });
}

tessel_status tessel_sequence_length(const tessel_sequence* sequence, int32_t* out) {
  return Get(__func__, sequence, Kind::kSequence, "sequence", out,
             [](const tessel_sequence& h) { return static_cast<int32_t>(h.history.size()); });
}

tessel_status tessel_llm_generate(tessel_llm* llm, const char* prompt, int32_t max_tokens,
                                  const tessel_sampler_config* config, tessel_token_callback callback, void* user_data,
                                  int32_t* generated) {
  return Guard(__func__, [&]() -> absl::Status {
    TESSEL_RETURN_IF_ERROR(Handles().Check(llm, Kind::kLlm, "llm"));
    TESSEL_RETURN_IF_ERROR(NotNull(prompt, "prompt"));
    TESSEL_RETURN_IF_ERROR(NotNull(reinterpret_cast<const void*>(callback), "callback"));
    if (max_tokens < 0) return absl::InvalidArgumentError(absl::StrCat("max_tokens is ", max_tokens));
    if (generated != nullptr) *generated = 0;
    tessel_sampler_config c;
    tessel_sampler_config_init(&c);
    if (config != nullptr) c = *config;
    const tessel::llm::Tokenizer& tok = llm->model->tokenizer();
    const std::vector<int32_t> prompt_tokens = tok.Encode(prompt, /*add_special=*/true);
    if (prompt_tokens.empty()) {
      return absl::InvalidArgumentError("the prompt is empty and the vocabulary has no BOS token");
    }
    tessel_sequence* seq = nullptr;
    TESSEL_RETURN_IF_ERROR(CreateSequence(llm, &seq));
    absl::Status status;
    {
      absl::MutexLock lock(&llm->mu);
      status = EvalLocked(seq, prompt_tokens.data(), static_cast<int32_t>(prompt_tokens.size()));
      std::string piece;
      for (int32_t i = 0; status.ok() && i < max_tokens; ++i) {
        // The last token needs no forward pass, and a full context allows none: sample it here.
        if (!seq->sampler || !SameConfig(c, seq->sampler_config)) {
          absl::StatusOr<std::unique_ptr<tessel::llm::SamplerChain>> sampler =
              tessel::llm::SamplerChain::Create(ToParams(c), static_cast<int>(llm->model->config().vocab_size));
          if (!sampler.ok()) {
            status = sampler.status();
            break;
          }
          seq->sampler = *std::move(sampler);
          seq->sampler_config = c;
        }
        const int32_t next = seq->sampler->Sample(seq->logits, seq->history);
        if (tok.IsEndOfGeneration(next)) break;
        piece = tok.TokenPiece(next);
        if (generated != nullptr) ++*generated;
        if (callback(next, piece.data(), piece.size(), user_data) != 0) break;
        if (i + 1 == max_tokens || static_cast<int64_t>(seq->history.size()) >= llm->max_context) break;
        status = EvalLocked(seq, &next, 1);
      }
    }
    absl::Status freed = FreeSequence(seq);
    return status.ok() ? freed : status;
  });
}

}  // extern "C"
