#include "model/tokenizers/vocab_table.h"

#include <algorithm>
#include <bit>

namespace tessera::model {

void VocabTable::build(const std::vector<std::pair<std::string_view, int32_t>>& entries) {
  const size_t capacity = std::bit_ceil(std::max<size_t>(16, 2 * entries.size()));
  slots_.assign(capacity, Slot{});
  arena_.clear();
  size_ = 0;
  longest_key_ = 0;
  const uint64_t mask = capacity - 1;
  for (const auto& [key, id] : entries) {
    const uint64_t h = hash(key);
    for (uint64_t i = h & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.id < 0) {
        s = {h, static_cast<uint32_t>(arena_.size()), static_cast<uint32_t>(key.size()), id};
        arena_.append(key);
        ++size_;
        longest_key_ = std::max(longest_key_, key.size());
        break;
      }
      if (s.hash == h && std::string_view(arena_).substr(s.offset, s.length) == key) {
        s.id = id;  // duplicate key: the later id wins
        break;
      }
    }
  }
}

int32_t VocabTable::find(std::string_view key, uint64_t h) const {
  if (slots_.empty()) return -1;
  const uint64_t mask = slots_.size() - 1;
  for (uint64_t i = h & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.id < 0) return -1;
    if (s.hash == h && s.length == key.size() &&
        arena_.compare(s.offset, s.length, key.data(), key.size()) == 0) {
      return s.id;
    }
  }
}

}  // namespace tessera::model
