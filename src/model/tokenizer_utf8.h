// UTF-8 helpers for the tokenizer's hot loop: validation once per text (the
// one validator, runtime/utf8.h), then unchecked decoding. Header-only so the
// per-character calls inline.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/utf8.h"

namespace tessera::model {

// Byte length of the UTF-8 sequence that starts with `lead` (1 for ASCII and,
// defensively, for a stray continuation byte).
inline int utf8_length(unsigned char lead) {
  if (lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

// Decodes the code point at `p` of already validated UTF-8; sets *len.
inline char32_t decode_utf8(const char* p, int* len) {
  const auto* s = reinterpret_cast<const unsigned char*>(p);
  const unsigned char b = s[0];
  if (b < 0x80) {
    *len = 1;
    return b;
  }
  if (b < 0xE0) {
    *len = 2;
    return (char32_t(b & 0x1F) << 6) | (s[1] & 0x3F);
  }
  if (b < 0xF0) {
    *len = 3;
    return (char32_t(b & 0x0F) << 12) | (char32_t(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
  }
  *len = 4;
  return (char32_t(b & 0x07) << 18) | (char32_t(s[1] & 0x3F) << 12) | (char32_t(s[2] & 0x3F) << 6) |
         (s[3] & 0x3F);
}

// Writes the UTF-8 form of `c` (a valid scalar value) to `out`; returns its length.
inline int encode_utf8(char32_t c, char* out) {
  if (c < 0x80) {
    out[0] = char(c);
    return 1;
  }
  if (c < 0x800) {
    out[0] = char(0xC0 | (c >> 6));
    out[1] = char(0x80 | (c & 0x3F));
    return 2;
  }
  if (c < 0x10000) {
    out[0] = char(0xE0 | (c >> 12));
    out[1] = char(0x80 | ((c >> 6) & 0x3F));
    out[2] = char(0x80 | (c & 0x3F));
    return 3;
  }
  out[0] = char(0xF0 | (c >> 18));
  out[1] = char(0x80 | ((c >> 12) & 0x3F));
  out[2] = char(0x80 | ((c >> 6) & 0x3F));
  out[3] = char(0x80 | (c & 0x3F));
  return 4;
}

}  // namespace tessera::model
