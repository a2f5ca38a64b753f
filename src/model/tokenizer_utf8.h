// UTF-8 helpers for the tokenizer's hot loop: validation once per text (the
// one validator, runtime/utf8.h), then unchecked decoding. Both are ICU's
// (unicode/utf8.h: inline macros, nothing linked), so what counts as a code
// point is ICU's everywhere. Wrapped here for names and types the tokenizers
// share; header-only so the per-character calls inline.
#pragma once

#include <unicode/utf8.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/utf8.h"

namespace tessera::model {

// Byte length of the UTF-8 sequence that starts with `lead` (1 for ASCII and,
// defensively, for a stray continuation byte).
inline int utf8_length(unsigned char lead) { return 1 + U8_COUNT_TRAIL_BYTES(lead); }

// Decodes the code point at `p` of already validated UTF-8; sets *len.
inline char32_t decode_utf8(const char* p, int* len) {
  const auto* s = reinterpret_cast<const uint8_t*>(p);
  int32_t i = 0;
  UChar32 c = 0;
  U8_NEXT_UNSAFE(s, i, c);
  *len = i;
  return static_cast<char32_t>(c);
}

// Writes the UTF-8 form of `c` (a valid scalar value) to `out`; returns its length.
inline int encode_utf8(char32_t c, char* out) {
  auto* s = reinterpret_cast<uint8_t*>(out);
  int32_t i = 0;
  U8_APPEND_UNSAFE(s, i, static_cast<UChar32>(c));
  return i;
}

}  // namespace tessera::model
