// GPT-2's byte-to-unicode map, used by the ByteLevel pre-tokenizer (bytes ->
// printable characters the BPE vocabulary is written in) and the ByteLevel
// decoder (back). Printable Latin-1 bytes (33..126, 161..172, 174..255) map
// to themselves; the other 68 bytes map to U+0100.. in byte order.
#pragma once

#include <array>
#include <cstdint>

namespace tessera::model::tokenizers {

struct ByteLevelMap {
  std::array<char32_t, 256> to_char;
  // to_byte[c] for c < 0x144, -1 where c is no byte's character.
  std::array<int16_t, 0x144> to_byte;
};

const ByteLevelMap& byte_level_map();

}  // namespace tessera::model::tokenizers
