// UTF-8 decoding and the Unicode classes (letter, number, white space) the GPT-2 pre-tokenizer uses.
#ifndef TESSEL_LLM_TOKENIZER_INTERNAL_UNICODE_H_
#define TESSEL_LLM_TOKENIZER_INTERNAL_UNICODE_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace tessel::llm::unicode {

// Decodes the code point at text[pos]; returns its byte length (>= 1). An invalid or truncated
// sequence decodes as one byte with *cp = kInvalid, so that every byte is covered exactly once.
inline constexpr uint32_t kInvalid = 0xFFFFFFFF;
int DecodeUtf8(absl::string_view text, size_t pos, uint32_t* cp);
void AppendUtf8(uint32_t cp, std::string* out);

bool IsLetter(uint32_t cp);
bool IsNumber(uint32_t cp);
bool IsSpace(uint32_t cp);

}  // namespace tessel::llm::unicode

#endif  // TESSEL_LLM_TOKENIZER_INTERNAL_UNICODE_H_
