// The GPT-2 pre-tokenizer over code points. Invalid UTF-8 bytes count as "other" characters.
#include "llm/tokenizer/internal/gpt2_pretokenizer.h"

#include "llm/tokenizer/internal/unicode.h"

namespace tessel::llm {
namespace {

enum class Class { kLetter, kNumber, kSpace, kOther };

Class Classify(uint32_t cp) {
  if (unicode::IsLetter(cp)) return Class::kLetter;
  if (unicode::IsNumber(cp)) return Class::kNumber;
  if (unicode::IsSpace(cp)) return Class::kSpace;
  return Class::kOther;
}

}  // namespace

std::vector<absl::string_view> Gpt2PreTokenize(absl::string_view text) {
  // Code points with their byte offsets (offsets has one extra entry: the end).
  std::vector<uint32_t> cps;
  std::vector<size_t> offsets;
  for (size_t pos = 0; pos < text.size();) {
    uint32_t cp;
    const int len = unicode::DecodeUtf8(text, pos, &cp);
    cps.push_back(cp);
    offsets.push_back(pos);
    pos += len;
  }
  offsets.push_back(text.size());
  const size_t n = cps.size();
  std::vector<Class> cls(n);
  for (size_t i = 0; i < n; ++i) cls[i] = Classify(cps[i]);

  std::vector<absl::string_view> words;
  auto emit = [&](size_t from, size_t to) { words.push_back(text.substr(offsets[from], offsets[to] - offsets[from])); };
  size_t i = 0;
  while (i < n) {
    if (cps[i] == '\'') {
      static constexpr absl::string_view kSuffixes[] = {"s", "t", "re", "ve", "m", "ll", "d"};
      bool matched = false;
      for (absl::string_view suffix : kSuffixes) {
        if (i + 1 + suffix.size() > n) continue;
        bool eq = true;
        for (size_t k = 0; k < suffix.size(); ++k) eq = eq && cps[i + 1 + k] == static_cast<uint32_t>(suffix[k]);
        if (eq) {
          emit(i, i + 1 + suffix.size());
          i += 1 + suffix.size();
          matched = true;
          break;
        }
      }
      if (matched) continue;
    }
    // " ?X+" for X in letters, numbers, other: an optional single ASCII space, then a run.
    const size_t start = (cps[i] == ' ' && i + 1 < n) ? i + 1 : i;
    if (cls[start] != Class::kSpace) {
      size_t j = start;
      while (j < n && cls[j] == cls[start]) ++j;
      emit(i, j);
      i = j;
      continue;
    }
    // White space: the whole run at the end of the text, else all of it but the last character
    // (which then leads the next word), but never less than one character.
    size_t j = i;
    while (j < n && cls[j] == Class::kSpace) ++j;
    if (j < n && j - i > 1) --j;
    emit(i, j);
    i = j;
  }
  return words;
}

}  // namespace tessel::llm
