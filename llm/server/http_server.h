// The OpenAI-compatible HTTP front of the engine: GET /health and /v1/models, POST /v1/completions and
// /v1/chat/completions (JSON, or server-sent events with "stream": true), POST /tokenize and
// /detokenize. Every request is validated before it reaches the engine; each failure answers with its
// HTTP status and {"error": {"message", "type", "code"}}, and the server goes on serving the others.
#ifndef TESSEL_LLM_SERVER_HTTP_SERVER_H_
#define TESSEL_LLM_SERVER_HTTP_SERVER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "llm/chat/chat_template.h"
#include "llm/server/engine.h"
#include "llm/tokenizer/tokenizer.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace tessel::llm {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                // 0: a free port (port() says which)
  std::string model_id = "model";  // what /v1/models lists and responses name
  std::string chat_template;      // Jinja source; empty: ChatML
  size_t max_body_bytes = 8 << 20;
  int read_timeout_s = 10;        // a client that stalls mid-request longer than this is dropped
};

class HttpServer {
 public:
  // Parses the chat template and binds the socket (so port() is known before Run()).
  static absl::StatusOr<std::unique_ptr<HttpServer>> Create(Engine& engine, const ServerOptions& options);
  ~HttpServer();

  int port() const { return port_; }
  // Serves until Stop(); returns once the listener is closed.
  absl::Status Run();
  void Stop();

 private:
  HttpServer(Engine& engine, const ServerOptions& options, ChatTemplate chat);
  void Routes();

  Engine& engine_;
  ServerOptions options_;
  ChatTemplate chat_;
  std::unique_ptr<httplib::Server> http_;
  int port_ = 0;
  std::atomic<int64_t> next_id_{1};
};

// The chat template a model carries: a GGUF file's tokenizer.chat_template, a Hugging Face directory's
// tokenizer_config.json "chat_template" (a string); NotFound when it has none.
absl::StatusOr<std::string> ModelChatTemplate(const std::string& model_path);

// Token ids of a rendered chat prompt: the texts of control tokens (<s>, <|im_start|>, ...) become those
// tokens, the text between them is encoded as text, and BOS is prepended when the vocabulary adds one
// and the template did not put it there.
std::vector<int32_t> EncodeChatPrompt(const Tokenizer& tokenizer, const std::string& prompt);

}  // namespace tessel::llm

#endif  // TESSEL_LLM_SERVER_HTTP_SERVER_H_
