// Endpoints, request validation and the OpenAI response shapes. nlohmann/json reports errors by
// exception; they are caught where JSON is parsed and never leave this file.
#include "llm/server/http_server.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <limits>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "httplib.h"
#include "llm/gguf/gguf.h"
#include "support/mapped_file.h"
#include "nlohmann/json.hpp"

namespace tessel::llm {
namespace {

using Json = nlohmann::json;

// ChatML, llama.cpp's fallback for a model that carries no template.
constexpr char kChatMl[] =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + "
    "'\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// An error for the client: HTTP status, OpenAI error type, optional code.
struct HttpError {
  int status;
  std::string message;
  std::string type;
  std::string code;
};

HttpError BadRequest(std::string message, std::string code = "") {
  return {400, std::move(message), "invalid_request_error", std::move(code)};
}

HttpError FromStatus(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
      return BadRequest(std::string(s.message()));
    case absl::StatusCode::kOutOfRange:
      return BadRequest(std::string(s.message()), "context_length_exceeded");
    case absl::StatusCode::kResourceExhausted:
      return {503, std::string(s.message()), "unavailable_error", ""};
    default:
      return {500, std::string(s.message()), "server_error", ""};
  }
}

Json ErrorBody(const HttpError& e) {
  Json err = {{"message", e.message}, {"type", e.type}};
  err["code"] = e.code.empty() ? Json(nullptr) : Json(e.code);
  return Json{{"error", err}};
}

void Reply(httplib::Response& res, const HttpError& e) {
  res.status = e.status;
  res.set_content(Dump(ErrorBody(e)), "application/json");
}

void Reply(httplib::Response& res, const Json& body) {
  res.status = 200;
  res.set_content(Dump(body), "application/json");
}

// The body as a JSON object, or the error to send.
absl::StatusOr<Json> ParseBody(const httplib::Request& req) {
  Json body;
  try {
    body = Json::parse(req.body);
  } catch (const Json::exception& e) {
    // nlohmann's message names the byte and the problem (including ill-formed UTF-8 in a string).
    return absl::InvalidArgumentError(absl::StrCat("the request body is not valid JSON: ", e.what()));
  }
  if (!body.is_object()) return absl::InvalidArgumentError("the request body must be a JSON object");
  return body;
}

absl::Status CheckFields(const Json& body, std::initializer_list<const char*> allowed) {
  for (auto it = body.begin(); it != body.end(); ++it) {
    bool ok = false;
    for (const char* a : allowed) ok |= it.key() == a;
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat("unknown field '", it.key(), "' (this server accepts: ",
                                                     absl::StrJoin(allowed.begin(), allowed.end(), ", "), ")"));
    }
  }
  return absl::OkStatus();
}

std::string TypeName(const Json& v) { return v.is_number_integer() ? "integer" : v.type_name(); }

// Typed optional fields: absent or null keeps the default; a value of another type or range is an error
// naming the field, what it must be and what came.
absl::Status GetNumber(const Json& body, const char* key, double lo, double hi, double* out) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_number() || !(it->get<double>() >= lo && it->get<double>() <= hi)) {
    return absl::InvalidArgumentError(absl::StrCat("'", key, "' must be a number in [", lo, ", ", hi, "], not ",
                                                   it->is_number() ? Dump(*it) : TypeName(*it)));
  }
  *out = it->get<double>();
  return absl::OkStatus();
}

absl::Status GetInt(const Json& body, const char* key, int64_t lo, int64_t* out) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (it->is_number_unsigned()) {
    *out = static_cast<int64_t>(std::min<uint64_t>(it->get<uint64_t>(), std::numeric_limits<int64_t>::max()));
    return absl::OkStatus();
  }
  if (!it->is_number_integer() || it->get<int64_t>() < lo) {
    return absl::InvalidArgumentError(absl::StrCat("'", key, "' must be an integer >= ", lo, ", not ",
                                                   it->is_number() ? Dump(*it) : TypeName(*it)));
  }
  *out = it->get<int64_t>();
  return absl::OkStatus();
}

absl::Status GetBool(const Json& body, const char* key, bool* out) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_boolean()) return absl::InvalidArgumentError(absl::StrCat("'", key, "' must be true or false, not ", TypeName(*it)));
  *out = it->get<bool>();
  return absl::OkStatus();
}

// Fields a client library may send with their neutral value; anything else is refused, not ignored.
absl::Status CheckNeutral(const Json& body) {
  for (const char* key : {"presence_penalty", "frequency_penalty"}) {
    double v = 0;
    if (absl::Status s = GetNumber(body, key, -2, 2, &v); !s.ok()) return s;
    if (v != 0) return absl::InvalidArgumentError(absl::StrCat("'", key, "' is not supported (only 0)"));
  }
  for (const char* key : {"logprobs", "echo"}) {
    auto it = body.find(key);
    if (it != body.end() && !it->is_null() && !(it->is_boolean() && !it->get<bool>())) {
      return absl::InvalidArgumentError(absl::StrCat("'", key, "' is not supported (only false)"));
    }
  }
  if (auto it = body.find("user"); it != body.end() && !it->is_string() && !it->is_null()) {
    return absl::InvalidArgumentError("'user' must be a string");
  }
  if (auto it = body.find("model"); it != body.end() && !it->is_string()) {
    return absl::InvalidArgumentError("'model' must be a string");
  }
  int64_t n = 1;
  if (absl::Status s = GetInt(body, "n", 1, &n); !s.ok()) return s;
  if (n != 1) return absl::InvalidArgumentError("'n' must be 1 (one choice per request)");
  return absl::OkStatus();
}

struct Sampling {
  GenerationParams params;
  bool stream = false;
  bool include_usage = false;
};

// Sampling fields common to both endpoints; OpenAI's defaults (temperature 1, top_p 1), top_k and min_p
// off unless given. max_tokens defaults to `default_max_tokens` (0: the rest of the context).
absl::Status ReadSampling(const Json& body, int64_t default_max_tokens, Sampling* s) {
  if (absl::Status st = CheckNeutral(body); !st.ok()) return st;
  SamplingParams& sp = s->params.sampling;
  double temperature = 1, top_p = 1, min_p = 0;
  int64_t top_k = 0, seed = -1, max_tokens = default_max_tokens;
  for (absl::Status st : {GetNumber(body, "temperature", 0, 2, &temperature), GetNumber(body, "top_p", 0, 1, &top_p),
                          GetNumber(body, "min_p", 0, 1, &min_p), GetInt(body, "top_k", 0, &top_k),
                          GetInt(body, "seed", std::numeric_limits<int64_t>::min(), &seed),
                          GetInt(body, "max_tokens", 1, &max_tokens),
                          GetInt(body, "max_completion_tokens", 1, &max_tokens), GetBool(body, "stream", &s->stream)}) {
    if (!st.ok()) return st;
  }
  sp.temperature = static_cast<float>(temperature);
  sp.top_p = std::max(static_cast<float>(top_p), 1e-6f);  // 0 keeps the single most likely token
  sp.min_p = static_cast<float>(min_p);
  sp.top_k = static_cast<int>(std::min<int64_t>(top_k, std::numeric_limits<int>::max()));
  sp.repeat_penalty = 1;
  sp.seed = body.contains("seed") && !body["seed"].is_null() ? static_cast<uint64_t>(seed) : std::random_device()();
  s->params.max_tokens = max_tokens;
  if (auto it = body.find("stream_options"); it != body.end() && !it->is_null()) {
    if (!it->is_object()) return absl::InvalidArgumentError("'stream_options' must be an object");
    if (absl::Status st = CheckFields(*it, {"include_usage"}); !st.ok()) return st;
    if (absl::Status st = GetBool(*it, "include_usage", &s->include_usage); !st.ok()) return st;
  }
  if (auto it = body.find("stop"); it != body.end() && !it->is_null()) {
    std::vector<std::string>& stop = s->params.stop;
    if (it->is_string()) {
      stop.push_back(it->get<std::string>());
    } else if (it->is_array() && it->size() <= 4) {
      for (const Json& x : *it) {
        if (!x.is_string()) return absl::InvalidArgumentError("'stop' must be a string or a list of up to 4 strings");
        stop.push_back(x.get<std::string>());
      }
    } else {
      return absl::InvalidArgumentError("'stop' must be a string or a list of up to 4 strings");
    }
    for (const std::string& x : stop) {
      if (x.empty()) return absl::InvalidArgumentError("'stop' strings must not be empty");
    }
  }
  return absl::OkStatus();
}

// The text of a message's content: a string, or a list of {"type": "text", "text": ...} parts.
absl::StatusOr<std::string> ContentText(const Json& content, size_t index) {
  if (content.is_string()) return content.get<std::string>();
  if (content.is_null()) return std::string();
  if (content.is_array()) {
    std::string text;
    for (const Json& part : content) {
      if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") || !part["text"].is_string()) {
        return absl::InvalidArgumentError(absl::StrCat("messages[", index, "].content: only text parts are supported"));
      }
      text += part["text"].get<std::string>();
    }
    return text;
  }
  return absl::InvalidArgumentError(absl::StrCat("messages[", index, "].content must be a string or a list of text parts"));
}

absl::StatusOr<std::vector<ChatMessage>> ReadMessages(const Json& body) {
  auto it = body.find("messages");
  if (it == body.end() || !it->is_array() || it->empty()) {
    return absl::InvalidArgumentError("'messages' must be a non-empty list of {role, content} objects");
  }
  std::vector<ChatMessage> out;
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& m = (*it)[i];
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
      return absl::InvalidArgumentError(absl::StrCat("messages[", i, "] must be an object with a string 'role'"));
    }
    for (auto f = m.begin(); f != m.end(); ++f) {
      if (f.key() != "role" && f.key() != "content" && f.key() != "name") {
        return absl::InvalidArgumentError(absl::StrCat("messages[", i, "]: unknown field '", f.key(), "'"));
      }
    }
    std::string role = m["role"].get<std::string>();
    if (role == "developer") role = "system";
    if (role != "system" && role != "user" && role != "assistant") {
      return absl::InvalidArgumentError(absl::StrCat("messages[", i, "].role must be system, user or assistant, not '",
                                                     role, "'"));
    }
    absl::StatusOr<std::string> text = ContentText(m.contains("content") ? m["content"] : Json(nullptr), i);
    if (!text.ok()) return text.status();
    out.push_back({role, *std::move(text)});
  }
  return out;
}

std::string TokenText(const Tokenizer& tok, int32_t id) { return id >= 0 ? tok.token_text(id) : std::string(); }

}  // namespace

std::vector<int32_t> EncodeChatPrompt(const Tokenizer& tok, const std::string& prompt) {
  std::vector<std::pair<std::string, int32_t>> specials;
  for (int32_t id = 0; id < tok.vocab_size(); ++id) {
    if (tok.token_type(id) == TokenType::kControl && tok.token_text(id).size() > 1) {
      specials.emplace_back(tok.token_text(id), id);
    }
  }
  // Longest first, so that a special token that is a prefix of another does not win.
  std::sort(specials.begin(), specials.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  std::vector<int32_t> out;
  size_t text_start = 0;
  auto flush = [&](size_t end) {
    if (end > text_start) {
      const std::vector<int32_t> t = tok.Encode(absl::string_view(prompt).substr(text_start, end - text_start), false);
      out.insert(out.end(), t.begin(), t.end());
    }
  };
  for (size_t i = 0; i < prompt.size();) {
    const std::pair<std::string, int32_t>* hit = nullptr;
    if (prompt[i] == '<' || prompt[i] == '[') {  // every family's control tokens open with one of these
      for (const auto& s : specials) {
        if (prompt.compare(i, s.first.size(), s.first) == 0) {
          hit = &s;
          break;
        }
      }
    }
    if (!hit) {
      ++i;
      continue;
    }
    flush(i);
    out.push_back(hit->second);
    i += hit->first.size();
    text_start = i;
  }
  flush(prompt.size());
  if (tok.add_bos() && tok.bos() >= 0 && (out.empty() || out[0] != tok.bos())) out.insert(out.begin(), tok.bos());
  return out;
}

absl::StatusOr<std::string> ModelChatTemplate(const std::string& model_path) {
  struct stat st;
  if (stat(model_path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    // A Hugging Face directory keeps it in tokenizer_config.json.
    const std::string config_path = model_path + "/tokenizer_config.json";
    absl::StatusOr<std::string> text = ReadFileToString(config_path);
    if (!text.ok()) return absl::NotFoundError(absl::StrCat(config_path, ": ", text.status().message()));
    Json config;
    try {
      config = Json::parse(*text);
    } catch (const Json::exception& e) {
      return absl::InvalidArgumentError(absl::StrCat(config_path, ": ", e.what()));
    }
    if (!config.is_object() || !config.contains("chat_template") || !config["chat_template"].is_string()) {
      return absl::NotFoundError(absl::StrCat(config_path, " has no chat_template string"));
    }
    return config["chat_template"].get<std::string>();
  }
  absl::StatusOr<std::unique_ptr<GgufFile>> gguf = GgufFile::Open(model_path);
  if (!gguf.ok()) return gguf.status();
  return (*gguf)->GetString("tokenizer.chat_template");
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Create(Engine& engine, const ServerOptions& options) {
  absl::StatusOr<ChatTemplate> chat =
      ChatTemplate::Parse(options.chat_template.empty() ? absl::string_view(kChatMl) : options.chat_template);
  if (!chat.ok()) return chat.status();
  std::unique_ptr<HttpServer> s(new HttpServer(engine, options, *std::move(chat)));
  s->http_ = std::make_unique<httplib::Server>();
  // One thread per connection being served: every slot and queued request streams on its own, plus a
  // few for /health and refusals while they are all busy.
  const size_t threads = static_cast<size_t>(engine.options().parallel + engine.options().max_queue + 4);
  s->http_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  s->http_->set_payload_max_length(options.max_body_bytes);
  s->http_->set_read_timeout(options.read_timeout_s, 0);
  s->http_->set_write_timeout(options.read_timeout_s, 0);
  s->Routes();
  if (options.port == 0) {
    s->port_ = s->http_->bind_to_any_port(options.host);
    if (s->port_ < 0) return absl::UnavailableError(absl::StrCat("cannot listen on ", options.host, " (any port)"));
  } else {
    if (!s->http_->bind_to_port(options.host, options.port)) {
      return absl::UnavailableError(absl::StrCat("cannot listen on ", options.host, ":", options.port,
                                                 " (in use, or not an address of this machine)"));
    }
    s->port_ = options.port;
  }
  return s;
}

HttpServer::HttpServer(Engine& engine, const ServerOptions& options, ChatTemplate chat)
    : engine_(engine), options_(options), chat_(std::move(chat)) {}

HttpServer::~HttpServer() = default;

absl::Status HttpServer::Run() {
  if (!http_->listen_after_bind()) return absl::InternalError("the HTTP listener stopped with an error");
  return absl::OkStatus();
}

void HttpServer::Stop() { http_->stop(); }

void HttpServer::Routes() {
  httplib::Server& http = *http_;
  const Tokenizer* tokenizer = &engine_.model().tokenizer();

  // Bodies of errors httplib raises itself (unknown path, body too large, bad request line).
  http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    const std::string type = res.status == 404 ? "not_found_error" : "invalid_request_error";
    const std::string message = res.status == 404   ? absl::StrCat("no endpoint ", req.method, " ", req.path)
                                : res.status == 413 ? "the request body is too large"
                                                    : absl::StrCat("HTTP ", res.status);
    res.set_content(Dump(ErrorBody({res.status, message, type, ""})), "application/json");
  });
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    Reply(res, HttpError{500, absl::StrCat("internal error: ", what), "server_error", ""});
  });

  http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    const EngineStats s = engine_.stats();
    Reply(res, Json{{"status", "ok"},
                    {"slots_total", engine_.options().parallel},
                    {"slots_processing", s.active},
                    {"queued", s.queued},
                    {"requests_done", s.completed},
                    {"requests_cancelled", s.cancelled},
                    {"reused_prompt_tokens", s.reused_prompt_tokens},
                    {"kv_blocks_free", s.free_kv_blocks},
                    {"kv_blocks_cached", s.cached_kv_blocks},
                    {"kv_blocks_total", s.total_kv_blocks}});
  });
  http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    Reply(res, Json{{"object", "list"},
                    {"data", Json::array({Json{{"id", options_.model_id},
                                               {"object", "model"},
                                               {"created", static_cast<int64_t>(std::time(nullptr))},
                                               {"owned_by", "tessel"},
                                               {"meta", {{"n_ctx", engine_.context()},
                                                         {"n_vocab", engine_.model().config().vocab_size}}}}})}});
  });

  http.Post("/tokenize", [tokenizer](const httplib::Request& req, httplib::Response& res) {
    const Tokenizer& tok = *tokenizer;
    absl::StatusOr<Json> body = ParseBody(req);
    if (!body.ok()) return Reply(res, FromStatus(body.status()));
    bool add_special = false;
    absl::Status s = CheckFields(*body, {"content", "add_special"});
    if (s.ok()) s = GetBool(*body, "add_special", &add_special);
    if (s.ok() && (!body->contains("content") || !(*body)["content"].is_string())) {
      s = absl::InvalidArgumentError("'content' must be a string");
    }
    if (!s.ok()) return Reply(res, FromStatus(s));
    Reply(res, Json{{"tokens", tok.Encode((*body)["content"].get<std::string>(), add_special)}});
  });
  http.Post("/detokenize", [tokenizer](const httplib::Request& req, httplib::Response& res) {
    const Tokenizer& tok = *tokenizer;
    absl::StatusOr<Json> body = ParseBody(req);
    if (!body.ok()) return Reply(res, FromStatus(body.status()));
    if (absl::Status s = CheckFields(*body, {"tokens"}); !s.ok()) return Reply(res, FromStatus(s));
    auto it = body->find("tokens");
    if (it == body->end() || !it->is_array()) return Reply(res, BadRequest("'tokens' must be a list of token ids"));
    std::vector<int32_t> ids;
    for (const Json& t : *it) {
      if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= tok.vocab_size()) {
        return Reply(res, BadRequest(absl::StrCat("token ", Dump(t), " is not an id of the vocabulary (0 to ",
                                                  tok.vocab_size() - 1, ")")));
      }
      ids.push_back(static_cast<int32_t>(t.get<int64_t>()));
    }
    Reply(res, Json{{"content", tok.Decode(ids)}});
  });

  // Both generation endpoints: validate, submit, then one JSON answer or a stream of events.
  auto generate = [this, tokenizer](const httplib::Request& req, httplib::Response& res, bool chat) {
    const Tokenizer& tok = *tokenizer;
    absl::StatusOr<Json> body = ParseBody(req);
    if (!body.ok()) return Reply(res, FromStatus(body.status()));
    absl::Status s = chat ? CheckFields(*body, {"model", "messages", "max_tokens", "max_completion_tokens",
                                                "temperature", "top_p", "top_k", "min_p", "seed", "stop", "n",
                                                "stream", "stream_options", "presence_penalty", "frequency_penalty",
                                                "logprobs", "user"})
                          : CheckFields(*body, {"model", "prompt", "max_tokens", "temperature", "top_p", "top_k",
                                                "min_p", "seed", "stop", "n", "stream", "stream_options",
                                                "presence_penalty", "frequency_penalty", "logprobs", "echo", "user"});
    if (!s.ok()) return Reply(res, FromStatus(s));
    Sampling sampling;
    // OpenAI's completions default to 16 tokens; chat runs to the end of the context.
    s = ReadSampling(*body, chat ? 0 : 16, &sampling);
    if (!s.ok()) return Reply(res, FromStatus(s));
    if (chat) {
      absl::StatusOr<std::vector<ChatMessage>> messages = ReadMessages(*body);
      if (!messages.ok()) return Reply(res, FromStatus(messages.status()));
      ChatTemplateInputs in;
      in.messages = *std::move(messages);
      in.bos_token = TokenText(tok, tok.bos());
      in.eos_token = TokenText(tok, tok.eos());
      in.add_generation_prompt = true;
      absl::StatusOr<std::string> prompt = chat_.Render(in);
      if (!prompt.ok()) return Reply(res, FromStatus(prompt.status()));
      sampling.params.prompt = EncodeChatPrompt(tok, *prompt);
    } else {
      auto it = body->find("prompt");
      if (it != body->end() && it->is_array() && it->size() == 1 && (*it)[0].is_string()) it = it->begin();
      if (it == body->end() || !it->is_string()) {
        return Reply(res, BadRequest("'prompt' must be a string (or a list of one string)"));
      }
      sampling.params.prompt = tok.Encode(it->get<std::string>(), /*add_special=*/true);
    }
    if (sampling.params.max_tokens == 0) {
      sampling.params.max_tokens = std::max<int64_t>(1, engine_.context() - static_cast<int64_t>(sampling.params.prompt.size()));
    }
    absl::StatusOr<std::shared_ptr<Request>> request = engine_.Submit(sampling.params);
    if (!request.ok()) return Reply(res, FromStatus(request.status()));

    const std::string id = absl::StrCat(chat ? "chatcmpl-" : "cmpl-", next_id_.fetch_add(1));
    const int64_t created = static_cast<int64_t>(std::time(nullptr));
    const std::string object = chat ? "chat.completion" : "text_completion";
    auto usage = [](const GenerationUpdate& u) {
      return Json{{"prompt_tokens", u.prompt_tokens},
                  {"completion_tokens", u.completion_tokens},
                  {"total_tokens", u.prompt_tokens + u.completion_tokens}};
    };
    auto finish = [](const GenerationUpdate& u) { return u.finish_reason == "stop" ? "stop" : "length"; };
    auto reply_body = [=](const std::string& text, const GenerationUpdate& u) {
      Json choice = {{"index", 0}, {"finish_reason", finish(u)}, {"logprobs", nullptr}};
      if (chat) {
        choice["message"] = {{"role", "assistant"}, {"content", text}};
      } else {
        choice["text"] = text;
      }
      return Json{{"id", id},
                  {"object", object},
                  {"created", created},
                  {"model", options_.model_id},
                  {"choices", Json::array({choice})},
                  {"usage", usage(u)}};
    };
    if (!sampling.stream) {
      // A completion that ends within its first kPlainTokens tokens (or kPlainWait) gets a plain JSON
      // reply, with the error's own status if it failed. A longer one goes out chunked: whitespace, which
      // may precede a JSON value, is written at every update and at least every kPlainWait while it
      // runs, so that a client that has left makes a write fail and its request is cancelled (its slot
      // and KV blocks freed) instead of running to max_tokens; the status is then already 200, and a
      // failure shows as an error body.
      constexpr int64_t kPlainTokens = 32;
      constexpr std::chrono::milliseconds kPlainWait(250);
      std::shared_ptr<Request> r = *request;
      auto text = std::make_shared<std::string>();
      const auto until = std::chrono::steady_clock::now() + kPlainWait;
      while (true) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
        std::optional<GenerationUpdate> u = left.count() > 0 ? r->NextFor(left) : std::nullopt;
        if (!u) break;
        *text += u->text;
        if (u->done) {
          if (!u->error.ok()) return Reply(res, FromStatus(u->error));
          return Reply(res, reply_body(*text, *u));
        }
        if (u->completion_tokens >= kPlainTokens) break;
      }
      res.status = 200;
      res.set_chunked_content_provider(
          "application/json",
          [=](size_t, httplib::DataSink& sink) {
            std::optional<GenerationUpdate> u = r->NextFor(kPlainWait);
            std::string out = " ";
            if (u) *text += u->text;
            if (u && u->done) out = Dump(u->error.ok() ? reply_body(*text, *u) : ErrorBody(FromStatus(u->error)));
            if (!sink.write(out.data(), out.size())) {
              r->Cancel();
              return false;
            }
            if (u && u->done) sink.done();
            return true;
          },
          [r](bool success) {
            if (!success) r->Cancel();
          });
      return;
    }
    // Server-sent events: a chunk per piece of text, a last chunk with finish_reason, optionally a usage
    // chunk, then [DONE]. A failed write means the client left: the request is cancelled and its
    // sequence freed before the next step.
    std::shared_ptr<Request> r = *request;
    const bool include_usage = sampling.include_usage;
    const std::string model_id = options_.model_id;
    auto chunk = [=](const std::string& text, bool first, const char* reason) {
      Json choice = {{"index", 0}, {"finish_reason", reason ? Json(reason) : Json(nullptr)}, {"logprobs", nullptr}};
      if (chat) {
        Json delta = Json::object();
        if (first) delta["role"] = "assistant";
        if (!reason) delta["content"] = text;
        choice["delta"] = delta;
      } else {
        choice["text"] = text;
      }
      Json j = {{"id", id},
                {"object", chat ? "chat.completion.chunk" : "text_completion"},
                {"created", created},
                {"model", model_id},
                {"choices", Json::array({choice})}};
      return absl::StrCat("data: ", Dump(j), "\n\n");
    };
    res.status = 200;
    res.set_header("Cache-Control", "no-cache");
    auto first = std::make_shared<bool>(true);
    res.set_chunked_content_provider(
        "text/event-stream",
        [=](size_t, httplib::DataSink& sink) {
          GenerationUpdate u = r->Next();
          std::string out;
          if (!u.text.empty() || (*first && chat)) {
            out += chunk(u.text, *first, nullptr);
            *first = false;
          }
          if (u.done) {
            if (!u.error.ok()) {
              out += absl::StrCat("data: ", Dump(ErrorBody(FromStatus(u.error))), "\n\n");
            } else {
              out += chunk("", false, finish(u));
              if (include_usage) {
                out += absl::StrCat("data: ",
                                    Dump(Json{{"id", id},
                                              {"object", chat ? "chat.completion.chunk" : "text_completion"},
                                              {"created", created},
                                              {"model", model_id},
                                              {"choices", Json::array()},
                                              {"usage", usage(u)}}),
                                    "\n\n");
              }
            }
            out += "data: [DONE]\n\n";
          }
          if (!out.empty() && !sink.write(out.data(), out.size())) {
            r->Cancel();
            return false;
          }
          if (u.done) sink.done();
          return true;
        },
        [r](bool success) {
          if (!success) r->Cancel();
        });
  };
  http.Post("/v1/chat/completions",
            [generate](const httplib::Request& req, httplib::Response& res) { generate(req, res, true); });
  http.Post("/v1/completions",
            [generate](const httplib::Request& req, httplib::Response& res) { generate(req, res, false); });
}

}  // namespace tessel::llm
