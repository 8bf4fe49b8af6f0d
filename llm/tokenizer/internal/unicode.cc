// UTF-8 and Unicode class lookups (binary search over generated range tables).
#include "llm/tokenizer/internal/unicode.h"

#include <algorithm>
#include <iterator>

namespace tessel::llm::unicode {
namespace {

struct CodepointRange {
  uint32_t first;
  uint32_t last;
};

#include "llm/tokenizer/internal/unicode_tables.inc"

template <size_t N>
bool InRanges(const CodepointRange (&ranges)[N], uint32_t cp) {
  const CodepointRange* it =
      std::upper_bound(std::begin(ranges), std::end(ranges), cp, [](uint32_t c, const CodepointRange& r) { return c < r.first; });
  return it != std::begin(ranges) && cp <= (it - 1)->last;
}

}  // namespace

int DecodeUtf8(absl::string_view text, size_t pos, uint32_t* cp) {
  const unsigned char c = static_cast<unsigned char>(text[pos]);
  int len;
  uint32_t v;
  if (c < 0x80) {
    *cp = c;
    return 1;
  } else if ((c & 0xE0) == 0xC0) {
    len = 2;
    v = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
    v = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    v = c & 0x07;
  } else {
    *cp = kInvalid;
    return 1;
  }
  if (pos + len > text.size()) {
    *cp = kInvalid;
    return 1;
  }
  for (int i = 1; i < len; ++i) {
    const unsigned char b = static_cast<unsigned char>(text[pos + i]);
    if ((b & 0xC0) != 0x80) {
      *cp = kInvalid;
      return 1;
    }
    v = (v << 6) | (b & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF are not valid UTF-8.
  static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < kMin[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
    *cp = kInvalid;
    return 1;
  }
  *cp = v;
  return len;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool IsLetter(uint32_t cp) { return cp != kInvalid && InRanges(kLetterRanges, cp); }
bool IsNumber(uint32_t cp) { return cp != kInvalid && InRanges(kNumberRanges, cp); }
bool IsSpace(uint32_t cp) { return cp != kInvalid && InRanges(kSpaceRanges, cp); }

}  // namespace tessel::llm::unicode
