#include "model/tokenizers/precompiled_charsmap.h"

#include <cstring>

#include "model/tokenizer_utf8.h"

namespace tessera::model::tokenizers {
namespace {

// Darts-clone unit fields.
bool trie_has_leaf(uint32_t unit) { return ((unit >> 8) & 1) == 1; }
uint32_t trie_value(uint32_t unit) { return unit & ((1u << 31) - 1); }
uint32_t trie_label(uint32_t unit) { return unit & ((1u << 31) | 0xFF); }
uint32_t trie_offset(uint32_t unit) { return (unit >> 10) << ((unit & (1u << 9)) >> 6); }

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

bool decode_base64(std::string_view in, std::string* out) {
  out->clear();
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  uint32_t bits = 0;
  int count = 0;
  for (char c : in) {
    const int v = base64_value(c);
    if (v < 0) return false;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out->push_back(static_cast<char>((bits >> count) & 0xFF));
    }
  }
  return true;
}

Status PrecompiledCharsmap::parse(std::string_view base64, const std::string& field,
                                  PrecompiledCharsmap* out) {
  std::string blob;
  if (!decode_base64(base64, &blob)) return invalid_argument(field + " is not valid base64");
  if (blob.size() < 4) return invalid_argument(field + " is too short for a charsmap");
  uint32_t trie_size = 0;
  for (int i = 3; i >= 0; --i) trie_size = (trie_size << 8) | static_cast<unsigned char>(blob[i]);
  if (trie_size % 4 != 0 || trie_size > blob.size() - 4 || trie_size == 0) {
    return invalid_argument(field + ": the trie size " + std::to_string(trie_size) +
                            " does not fit the " + std::to_string(blob.size()) + "-byte charsmap");
  }
  PrecompiledCharsmap m;
  m.trie_.resize(trie_size / 4);
  for (size_t i = 0; i < m.trie_.size(); ++i) {
    const auto* p = reinterpret_cast<const unsigned char*>(blob.data() + 4 + 4 * i);
    m.trie_[i] = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
  }
  m.normalized_ = blob.substr(4 + trie_size);
  if (find_invalid_utf8(m.normalized_) != m.normalized_.size()) {
    return invalid_argument(field + ": the normalized strings are not valid UTF-8");
  }
  *out = std::move(m);
  return Status::Ok();
}

std::optional<std::string_view> PrecompiledCharsmap::transform(std::string_view chunk) const {
  size_t node = 0;
  uint32_t unit = trie_[node];
  node ^= trie_offset(unit);
  for (char ch : chunk) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == 0) break;
    node ^= c;
    if (node >= trie_.size()) return std::nullopt;
    unit = trie_[node];
    if (trie_label(unit) != c) return std::nullopt;
    node ^= trie_offset(unit);
    if (node >= trie_.size()) return std::nullopt;
    if (trie_has_leaf(unit)) {
      const size_t begin = trie_value(trie_[node]);
      if (begin >= normalized_.size()) return std::nullopt;
      size_t end = normalized_.find('\0', begin);
      if (end == std::string::npos) end = normalized_.size();
      std::string_view s = std::string_view(normalized_).substr(begin, end - begin);
      // A value that points into the middle of a character would make the
      // text invalid UTF-8; treat it as no match.
      if (find_invalid_utf8(s) != s.size()) return std::nullopt;
      return s;
    }
  }
  return std::nullopt;
}

}  // namespace tessera::model::tokenizers
