// The Unigram model of HF `tokenizers` (SentencePiece): the segmentation of a
// word into vocabulary pieces with the highest total score, found by Viterbi
// over every piece that starts at each character. A character no piece
// covers is the unknown token, scored min_score - 10; adjacent unknowns fuse
// into one (HF's fuse_unk, always on); with byte_fallback an unknown piece
// becomes its <0xXX> byte tokens instead when the vocabulary has them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/tokenizers/pipeline.h"
#include "model/tokenizers/vocab_table.h"

namespace tessera::model::tokenizers {

class UnigramModel final : public WordModel {
 public:
  // `pieces` in id order with their scores.
  static Status create(std::vector<std::pair<std::string, double>> pieces,
                       std::optional<int32_t> unk_id, bool byte_fallback, const std::string& source,
                       std::unique_ptr<const WordModel>* out);

  void tokenize(std::string_view word, std::vector<Piece>* out) const override;
  void for_each_token(const std::function<void(std::string_view, int32_t)>& fn) const override {
    for (size_t i = 0; i < pieces_.size(); ++i) fn(pieces_[i].first, static_cast<int32_t>(i));
  }
  std::optional<int32_t> token_to_id(std::string_view token) const override {
    const int32_t id = table_.find(token);
    return id < 0 ? std::nullopt : std::optional<int32_t>(id);
  }
  std::optional<int32_t> unk_id() const override { return unk_id_; }
  std::string describe() const override;

 private:
  std::vector<std::pair<std::string, double>> pieces_;
  VocabTable table_;
  // The hashes (VocabTable::hash) of every proper prefix of a piece: the
  // Viterbi stops extending a piece at the first length no piece continues
  // (HF walks a trie for this). Hashes only, no key bytes: a piece of L bytes
  // adds L entries, not L^2 / 2 bytes (a hostile 100k-byte piece took 16 s
  // to load and then bad_alloc). A colliding hash only lets the loop go on;
  // every piece found is checked whole in table_.
  class HashSet {
   public:
    void build(const std::vector<uint64_t>& hashes);
    bool contains(uint64_t h) const;

   private:
    std::vector<uint64_t> slots_;  // power-of-two size, at most half full; 0: empty
  };
  HashSet prefixes_;
  std::optional<int32_t> unk_id_;
  bool byte_fallback_ = false;
  double unk_score_ = 0;
};

}  // namespace tessera::model::tokenizers
