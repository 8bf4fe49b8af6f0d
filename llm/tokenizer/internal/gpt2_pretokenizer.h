// GPT-2's pre-tokenizer regex, written out as code:
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
#ifndef TESSEL_LLM_TOKENIZER_INTERNAL_GPT2_PRETOKENIZER_H_
#define TESSEL_LLM_TOKENIZER_INTERNAL_GPT2_PRETOKENIZER_H_

#include <vector>

#include "absl/strings/string_view.h"

namespace tessel::llm {

// The words of `text`, in order; together they cover every byte exactly once.
std::vector<absl::string_view> Gpt2PreTokenize(absl::string_view text);

}  // namespace tessel::llm

#endif  // TESSEL_LLM_TOKENIZER_INTERNAL_GPT2_PRETOKENIZER_H_
