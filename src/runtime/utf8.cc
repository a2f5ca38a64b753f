#include "runtime/utf8.h"

#include <unicode/utf8.h>

#include <cstdint>
#include <cstdio>

namespace tessera {

size_t find_invalid_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  // ICU documents int32_t offsets; the macro only indexes and compares, so a
  // 64-bit offset keeps texts over 2 GiB correct too.
  const int64_t n = static_cast<int64_t>(text.size());
  int64_t i = 0;
  while (i < n) {
    const int64_t start = i;
    UChar32 c = 0;
    U8_NEXT(s, i, n, c);
    if (c < 0) return static_cast<size_t>(start);
  }
  return text.size();
}

std::string describe_invalid_utf8(std::string_view text) {
  const size_t bad = find_invalid_utf8(text);
  if (bad == text.size()) return {};
  std::string bytes;
  for (size_t k = bad; k < text.size() && k < bad + 4; ++k) {
    char hex[6];
    std::snprintf(hex, sizeof hex, "%s%02X", bytes.empty() ? "" : " ",
                  static_cast<unsigned char>(text[k]));
    bytes += hex;
  }
  return "not valid UTF-8 at byte " + std::to_string(bad) + " (bytes " + bytes + ")";
}

}  // namespace tessera
