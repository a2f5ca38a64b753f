// The BPE model of HF `tokenizers`: a word starts as one symbol per
// character (with continuing_subword_prefix / end_of_word_suffix, unknown
// characters as the unk token, fused when fuse_unk, or as <0xXX> byte tokens
// with byte_fallback), then the adjacent pair of lowest merge rank is merged,
// leftmost first, until no pair has a merge. With ignore_merges a word that
// is itself in the vocabulary is one token.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/tokenizers/pipeline.h"
#include "model/tokenizers/vocab_table.h"

namespace tessera::model::tokenizers {

struct BpeOptions {
  std::optional<std::string> unk_token;
  std::string continuing_subword_prefix;
  std::string end_of_word_suffix;
  bool fuse_unk = false;
  bool byte_fallback = false;
  bool ignore_merges = false;
};

class BpeModel final : public WordModel {
 public:
  // `merges` are token pairs in rank order. Errors name the file (`source`)
  // and the offending vocab or merges entry.
  static Status create(std::vector<std::pair<std::string, int32_t>> vocab,
                       const std::vector<std::pair<std::string, std::string>>& merges,
                       BpeOptions options, const std::string& source,
                       std::unique_ptr<const WordModel>* out);

  void tokenize(std::string_view word, std::vector<Piece>* out) const override;
  void for_each_token(const std::function<void(std::string_view, int32_t)>& fn) const override {
    for (const auto& [token, id] : vocab_) fn(token, id);
  }
  std::optional<int32_t> token_to_id(std::string_view token) const override {
    const int32_t id = table_.find(token);
    return id < 0 ? std::nullopt : std::optional<int32_t>(id);
  }
  std::optional<int32_t> unk_id() const override {
    return unk_id_ < 0 ? std::nullopt : std::optional<int32_t>(unk_id_);
  }
  std::string describe() const override;

 private:
  struct Merge {
    uint32_t rank;
    int32_t id;  // the merged token
  };
  static uint64_t key(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }
  // The symbols a word starts as.
  void initial_symbols(std::string_view word, std::vector<Piece>* out) const;

  std::vector<std::pair<std::string, int32_t>> vocab_;
  VocabTable table_;
  std::unordered_map<uint64_t, Merge> merges_;
  BpeOptions options_;
  int32_t unk_id_ = -1;
};

}  // namespace tessera::model::tokenizers
