// The vocabulary lookup of WordPiece: an open-addressing hash table over one
// string arena. WordPiece probes every prefix of the rest of a word, longest
// first; the hash is FNV-1a so that the hashes of all those prefixes come
// from one forward pass (prefix_hashes) instead of one pass per probe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera::model {

class VocabTable {
 public:
  static constexpr uint64_t kHashSeed = 0xcbf29ce484222325ULL;  // FNV-1a 64 offset basis
  static uint64_t hash_step(uint64_t h, char byte) {
    return (h ^ static_cast<unsigned char>(byte)) * 0x100000001b3ULL;  // FNV-1a 64 prime
  }
  static uint64_t hash(std::string_view key) {
    uint64_t h = kHashSeed;
    for (char b : key) h = hash_step(h, b);
    return h;
  }

  // `entries` is key -> id; a later duplicate key wins.
  void build(const std::vector<std::pair<std::string_view, int32_t>>& entries);

  // The id of `key` whose hash() is `h`, or -1.
  int32_t find(std::string_view key, uint64_t h) const;
  int32_t find(std::string_view key) const { return find(key, hash(key)); }

  size_t size() const { return size_; }
  size_t longest_key() const { return longest_key_; }  // in bytes

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t offset = 0;  // key bytes in arena_
    uint32_t length = 0;
    int32_t id = -1;  // -1: empty slot
  };
  std::vector<Slot> slots_;  // power-of-two size, at most half full
  std::string arena_;
  size_t size_ = 0;
  size_t longest_key_ = 0;
};

}  // namespace tessera::model
