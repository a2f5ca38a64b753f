// The one UTF-8 validator: the tokenizers (once per text, before their
// unchecked decoding), the document reader and the vocabulary loaders all
// ask it, so every layer agrees on what valid UTF-8 is. Hand-written rather
// than a library's: it is a dozen lines of the Unicode standard's table
// (Table 3-7, well-formed byte sequences), header-only so the tokenizers'
// call inlines.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tessera {

// Returns text.size() when `text` is valid UTF-8 (no overlong forms, no
// surrogates, nothing above U+10FFFF, no truncated sequence), else the byte
// offset of the first sequence that is not.
inline size_t find_invalid_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char b = s[i];
    if (b < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (b >= 0xC2 && b <= 0xDF) {
      len = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      len = 3;
      if (b == 0xE0) lo = 0xA0;  // overlong
      if (b == 0xED) hi = 0x9F;  // UTF-16 surrogates
    } else if (b >= 0xF0 && b <= 0xF4) {
      len = 4;
      if (b == 0xF0) lo = 0x90;  // overlong
      if (b == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
      return i;
    }
    if (i + len > n || s[i + 1] < lo || s[i + 1] > hi) return i;
    for (size_t k = 2; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
    }
    i += len;
  }
  return n;
}

// "" when `text` is valid UTF-8; otherwise "not valid UTF-8 at byte N (bytes
// C3 28)": the offset of the first bad sequence and up to 4 bytes from it.
std::string describe_invalid_utf8(std::string_view text);

}  // namespace tessera
