// Renders text that came from outside (a file, a flag, a request) for an error
// message: quoted, cut to a few dozen bytes, and with every byte that is not
// printable ASCII escaped as \xNN. A hostile value of megabytes, or one holding
// terminal escapes or invalid UTF-8, then costs the message a bounded, safe
// string; the total length is still reported so the user can find the value.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tessera {

// Bytes of the value shown before it is cut.
inline constexpr size_t kBoundedTextShown = 40;

// "'abc'", "'\x01b'", "'aaaa...' (1048576 bytes)".
inline std::string quote_bounded(std::string_view text, size_t max_shown = kBoundedTextShown) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  const size_t shown = text.size() < max_shown ? text.size() : max_shown;
  for (size_t i = 0; i < shown; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    }
  }
  out += shown < text.size() ? "...' (" + std::to_string(text.size()) + " bytes)" : "'";
  return out;
}

}  // namespace tessera
