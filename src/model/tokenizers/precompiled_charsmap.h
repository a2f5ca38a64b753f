// sentencepiece's precompiled_charsmap, the table behind HF's `Precompiled`
// normalizer (the format of HF's spm_precompiled crate). Decoded from base64
// the blob is:
//
//   u32 (little-endian)  trie_size, in bytes
//   u32[trie_size / 4]   a Darts-clone double-array trie over UTF-8 keys;
//                        a key's value is an offset into `normalized`
//   bytes                normalized strings, each ended by a 0 byte
//
// Every read is bounds-checked: a hostile blob makes lookups miss, never
// read outside it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/status.h"

namespace tessera::model::tokenizers {

class PrecompiledCharsmap {
 public:
  // `base64` as stored in tokenizer.json; `field` names it in errors.
  static Status parse(std::string_view base64, const std::string& field, PrecompiledCharsmap* out);

  // The replacement of the shortest key that is a prefix of `chunk` (HF's
  // `transform`: the first result of common_prefix_search), or nullopt.
  std::optional<std::string_view> transform(std::string_view chunk) const;

  size_t trie_units() const { return trie_.size(); }

 private:
  std::vector<uint32_t> trie_;
  std::string normalized_;
};

// Standard base64 (with or without '=' padding); false on any other byte.
bool decode_base64(std::string_view in, std::string* out);

}  // namespace tessera::model::tokenizers
