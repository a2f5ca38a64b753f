#include "model/tokenizers/byte_level_map.h"

namespace tessera::model::tokenizers {

const ByteLevelMap& byte_level_map() {
  static const ByteLevelMap map = [] {
    ByteLevelMap m;
    m.to_byte.fill(-1);
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
      m.to_char[b] = printable ? static_cast<char32_t>(b) : next++;
      m.to_byte[m.to_char[b]] = static_cast<int16_t>(b);
    }
    return m;
  }();
  return map;
}

}  // namespace tessera::model::tokenizers
