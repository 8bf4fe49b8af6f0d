// Chat prompts from a model's own `tokenizer.chat_template`: a renderer for the subset of Jinja that
// the Hugging Face chat templates of the common families use (Llama 2 and 3, ChatML, Mistral, Gemma,
// Phi, Zephyr/TinyLlama), with Hugging Face's environment settings (trim_blocks, lstrip_blocks).
// Anything outside the subset is a parse or render error naming the construct and its byte offset.
//
// The subset: text, {{ expr }}, {# comments #}, whitespace control ({%- -%} {{- -}}), {% if / elif /
// else / endif %}, {% for x in expr %} / {% for a, b in expr %} ... {% else %}? {% endfor %} with loop.index,
// index0, first, last, length, revindex, revindex0; {% set name = expr %}; expressions over strings
// (with escapes), integers, true/false/none, list literals, names, attribute and item access, slices,
// + - * / // % ~, comparisons, in / not in, and / or / not, `a if c else b`, tests (is [not] defined /
// none / string / number / mapping / sequence / true / false), filters (trim, length, upper, lower,
// string, tojson, default), methods (strip, lstrip, rstrip, upper, lower, startswith, endswith, split,
// items, keys, values, get) and raise_exception(message).
#ifndef TESSEL_LLM_CHAT_CHAT_TEMPLATE_H_
#define TESSEL_LLM_CHAT_CHAT_TEMPLATE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tessel::llm {

struct ChatMessage {
  std::string role;
  std::string content;
};

struct ChatTemplateInputs {
  std::vector<ChatMessage> messages;
  std::string bos_token;
  std::string eos_token;
  bool add_generation_prompt = true;
};

namespace chat_internal {
struct Node;
}  // namespace chat_internal

class ChatTemplate {
 public:
  // InvalidArgument for a syntax error, Unimplemented for a construct outside the subset; both name
  // the byte offset in `source`.
  static absl::StatusOr<ChatTemplate> Parse(absl::string_view source);

  // InvalidArgument when the template raises (raise_exception, e.g. roles that do not alternate) or
  // meets a value it cannot use (a call of an unknown function, a subscript of a string by a name...).
  absl::StatusOr<std::string> Render(const ChatTemplateInputs& inputs) const;

 private:
  std::shared_ptr<const chat_internal::Node> root_;
};

}  // namespace tessel::llm

#endif  // TESSEL_LLM_CHAT_CHAT_TEMPLATE_H_
