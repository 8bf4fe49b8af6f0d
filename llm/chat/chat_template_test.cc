// The renderer on the chat templates the model families ship (copied verbatim from their Hugging Face
// tokenizer_config.json, as GGUF files carry them in tokenizer.chat_template), each against the prompt
// written out by hand from the family's documented format; then the Jinja features one by one and
// the errors.
#include "llm/chat/chat_template.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessel::llm {
namespace {

using ::testing::HasSubstr;

const char kChatMl[] =
    R"({% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %})";

const char kLlama2[] =
    R"({% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\n' + system_message + '\n<</SYS>>\n\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %})";

const char kLlama3[] =
    R"({% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %})";

const char kMistral[] =
    R"({{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %})";

const char kGemma[] =
    R"({{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %})";

const char kPhi3[] =
    R"({% for message in messages %}{% if message['role'] == 'system' %}{{'<|system|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'user' %}{{'<|user|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'assistant' %}{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %})";

// TinyLlama-1.1B-Chat (Zephyr format): the newlines between tags go by trim_blocks, as in Hugging Face.
const char kZephyr[] = R"({% for message in messages %}
{% if message['role'] == 'user' %}
{{ '<|user|>\n' + message['content'] + eos_token }}
{% elif message['role'] == 'system' %}
{{ '<|system|>\n' + message['content'] + eos_token }}
{% elif message['role'] == 'assistant' %}
{{ '<|assistant|>\n'  + message['content'] + eos_token }}
{% endif %}
{% if loop.last and add_generation_prompt %}
{{ '<|assistant|>' }}
{% endif %}
{% endfor %})";

std::string Render(const char* source, std::vector<ChatMessage> messages, const std::string& bos,
                   const std::string& eos, bool add_generation_prompt = true) {
  absl::StatusOr<ChatTemplate> t = ChatTemplate::Parse(source);
  if (!t.ok()) return "parse error: " + t.status().ToString();
  ChatTemplateInputs in;
  in.messages = std::move(messages);
  in.bos_token = bos;
  in.eos_token = eos;
  in.add_generation_prompt = add_generation_prompt;
  absl::StatusOr<std::string> out = t->Render(in);
  return out.ok() ? *out : "render error: " + out.status().ToString();
}

const std::vector<ChatMessage> kSystemUser = {{"system", "You are terse."}, {"user", "Hi"}};
const std::vector<ChatMessage> kThreeTurns = {{"user", "Hi"}, {"assistant", "Hello"}, {"user", "Again"}};

TEST(ChatTemplateTest, ChatMl) {
  EXPECT_EQ(Render(kChatMl, kSystemUser, "", "<|im_end|>"),
            "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(Render(kChatMl, {{"user", "Hi"}}, "", "", false), "<|im_start|>user\nHi<|im_end|>\n");
}

TEST(ChatTemplateTest, Llama2) {
  EXPECT_EQ(Render(kLlama2, kSystemUser, "<s>", "</s>"), "<s>[INST] <<SYS>>\nYou are terse.\n<</SYS>>\n\nHi [/INST]");
  EXPECT_EQ(Render(kLlama2, kThreeTurns, "<s>", "</s>"), "<s>[INST] Hi [/INST] Hello </s><s>[INST] Again [/INST]");
  EXPECT_THAT(Render(kLlama2, {{"user", "a"}, {"user", "b"}}, "<s>", "</s>"),
              HasSubstr("Conversation roles must alternate"));
}

TEST(ChatTemplateTest, Llama3) {
  EXPECT_EQ(Render(kLlama3, {{"system", " You are terse.\n"}, {"user", "Hi"}}, "<|begin_of_text|>", "<|eot_id|>"),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are terse.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplateTest, Mistral) {
  EXPECT_EQ(Render(kMistral, kThreeTurns, "<s>", "</s>"), "<s>[INST] Hi [/INST]Hello</s>[INST] Again [/INST]");
  EXPECT_THAT(Render(kMistral, kSystemUser, "<s>", "</s>"), HasSubstr("Conversation roles must alternate"));
  EXPECT_THAT(Render(kMistral, {{"user", "a"}, {"tool", "b"}}, "<s>", "</s>"),
              HasSubstr("Only user and assistant roles are supported!"));
}

TEST(ChatTemplateTest, Gemma) {
  EXPECT_EQ(Render(kGemma, kThreeTurns, "<bos>", "<eos>"),
            "<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\nHello<end_of_turn>\n"
            "<start_of_turn>user\nAgain<end_of_turn>\n<start_of_turn>model\n");
  EXPECT_THAT(Render(kGemma, kSystemUser, "<bos>", "<eos>"), HasSubstr("System role not supported"));
}

TEST(ChatTemplateTest, Phi3) {
  EXPECT_EQ(Render(kPhi3, kSystemUser, "<s>", "<|endoftext|>"),
            "<|system|>\nYou are terse.<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\n");
  EXPECT_EQ(Render(kPhi3, {{"user", "Hi"}}, "<s>", "<|endoftext|>", false), "<|user|>\nHi<|end|>\n<|endoftext|>");
}

TEST(ChatTemplateTest, ZephyrTrimsBlockNewlines) {
  EXPECT_EQ(Render(kZephyr, kSystemUser, "<s>", "</s>"), "<|system|>\nYou are terse.</s>\n<|user|>\nHi</s>\n<|assistant|>\n");
}

TEST(ChatTemplateTest, JinjaFeatures) {
  const std::vector<ChatMessage> m = {{"user", "a"}, {"assistant", "b"}, {"user", "c"}};
  // Whitespace control, lstrip_blocks, slices with negative bounds and steps, loop variables, ~, filters.
  EXPECT_EQ(Render("x  {%- if true -%}  \n  y{% endif %}", m, "", ""), "xy");
  EXPECT_EQ(Render("a\n    {% if true %}b{% endif %}", m, "", ""), "a\nb");
  EXPECT_EQ(Render("{% for x in messages[-2:] %}{{ x.content }}{% endfor %}", m, "", ""), "bc");
  EXPECT_EQ(Render("{% for x in messages[::-1] %}{{ x.content }}{% endfor %}", m, "", ""), "cba");
  EXPECT_EQ(Render("{% for x in messages %}{{ loop.index }}/{{ loop.length }}{% if not loop.last %},{% endif %}"
                   "{% endfor %}", m, "", ""),
            "1/3,2/3,3/3");
  EXPECT_EQ(Render("{{ 7 // 2 }} {{ -7 % 3 }} {{ 1 ~ 'x' }} {{ messages | length }} {{ 'AbC' | lower }}", m, "", ""),
            "3 2 1x 3 abc");
  EXPECT_EQ(Render("{{ 'yes' if messages[0].role == 'user' else 'no' }}{{ foo is defined }}{{ none is none }}", m,
                   "", ""),
            "yesFalseTrue");
  // Namespaces carry state out of a loop; a plain set inside the loop does not leak.
  EXPECT_EQ(Render("{% set ns = namespace(n=0) %}{% set k = 5 %}{% for x in messages %}{% set ns.n = ns.n + 1 %}"
                   "{% set k = 9 %}{% endfor %}{{ ns.n }} {{ k }}",
                   m, "", ""),
            "3 5");
  EXPECT_EQ(Render("{% for x in [] %}a{% else %}empty{% endfor %}{{ 'q' in 'aqa' }}{{ 2 not in [1, 2] }}", m, "", ""),
            "emptyTrueFalse");
}

TEST(ChatTemplateTest, ErrorsNameTheConstructAndOffset) {
  absl::StatusOr<ChatTemplate> t = ChatTemplate::Parse("ab{% macro f() %}x{% endmacro %}");
  EXPECT_EQ(t.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("'macro' statement at byte 2"));
  EXPECT_THAT(ChatTemplate::Parse("{{ x ").status().message(), HasSubstr("never closed"));
  EXPECT_THAT(ChatTemplate::Parse("{% if x %}a").status().message(), HasSubstr("missing 'endif'"));
  EXPECT_THAT(ChatTemplate::Parse("{% endfor %}").status().message(), HasSubstr("without its opening"));
  EXPECT_THAT(ChatTemplate::Parse("{{ x | wordwrap }}")->Render({}).status().message(), HasSubstr("wordwrap"));
  EXPECT_THAT(Render("{{ messages[0].content + 1 }}", {{"user", "a"}}, "", ""), HasSubstr("'+' between string"));
  EXPECT_THAT(Render("{{ nope(1) }}", {}, "", ""), HasSubstr("unknown function 'nope'"));
}

}  // namespace
}  // namespace tessel::llm
