// The WordPiece model of HF `tokenizers`: greedy longest-match-first split of
// one pre-tokenized word into vocabulary pieces, the whole word becoming the
// unknown token when any part of it has no piece or it is longer than
// max_input_chars_per_word characters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/tokenizers/vocab_table.h"
#include "tessera/status.h"

namespace tessera::model {

struct WordPieceOptions {
  std::string unk_token = "[UNK]";
  std::string continuing_subword_prefix = "##";
  size_t max_input_chars_per_word = 100;
};

class WordPiece {
 public:
  // A piece of a word: vocabulary id and byte range [begin, end) in the word.
  struct Piece {
    int32_t id;
    size_t begin;
    size_t end;
  };

  // `vocab` is token -> id; a later duplicate token wins, as in HF. `source`
  // names the file for error messages (unknown token missing from the vocab).
  static Status create(const std::vector<std::pair<std::string, int32_t>>& vocab,
                       const WordPieceOptions& options, const std::string& source, WordPiece* out);

  // Appends the pieces of `word` (non-empty, valid UTF-8) to `out`.
  void tokenize(std::string_view word, std::vector<Piece>* out) const;

  // Id of a whole vocabulary entry.
  std::optional<int32_t> find(std::string_view token) const;
  int32_t unk_id() const { return unk_id_; }
  size_t max_chars() const { return max_chars_; }  // max_input_chars_per_word
  size_t size() const { return words_.size(); }
  int32_t max_id() const { return max_id_; }

 private:
  // Longest match of word[start..) in `vocab`: sets *end, returns the id or -1.
  static int32_t longest_match(const VocabTable& vocab, std::string_view word, size_t start,
                               size_t* end);

  VocabTable words_;          // every entry, looked up at the start of a word
  VocabTable continuations_;  // entries with the prefix, keyed without it
  size_t max_chars_ = 0;
  int32_t unk_id_ = 0;
  int32_t max_id_ = -1;
};

}  // namespace tessera::model
