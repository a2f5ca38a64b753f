// The one UTF-8 validator: the tokenizers (once per text, before their
// unchecked decoding), the document reader and the vocabulary loaders all
// ask it, so every layer agrees on what valid UTF-8 is. It is ICU's
// definition (U8_NEXT: no overlong forms, no surrogates, nothing above
// U+10FFFF, no truncated sequence), the library the tokenizers already use
// for every Unicode property.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tessera {

// Returns text.size() when `text` is valid UTF-8, else the byte offset of
// the first sequence that is not.
size_t find_invalid_utf8(std::string_view text);

// "" when `text` is valid UTF-8; otherwise "not valid UTF-8 at byte N (bytes
// C3 28)": the offset of the first bad sequence and up to 4 bytes from it.
std::string describe_invalid_utf8(std::string_view text);

}  // namespace tessera
