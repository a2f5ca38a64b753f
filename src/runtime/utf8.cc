#include "runtime/utf8.h"

#include <cstdio>

namespace tessera {

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
