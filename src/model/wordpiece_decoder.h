// Token ids back to text, as HF `tokenizers` (0.22) decodes a BERT
// tokenizer: ids -> tokens (added tokens first), special tokens dropped when
// asked, then its WordPiece decoder token by token: a continuation piece
// ("##ing") loses its prefix and glues to the token before, any other token
// after the first gets a leading space, and with `cleanup` the spaces that
// tokenization put before punctuation and contractions go (" ." -> ".").
// Unlike HF, which drops an id it does not know, decode() refuses it and
// says where it is: a server must not answer a different text than asked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/status.h"

namespace tessera::model {

struct WordPieceDecoderOptions {
  // "WordPiece" (the decoder of BERT tokenizers), "" (tokenizer.json has no
  // decoder: tokens joined by single spaces), or another type, which
  // decode() refuses with an error naming it.
  std::string type = "WordPiece";
  std::string prefix = "##";
  bool cleanup = true;
};

class WordPieceDecoder {
 public:
  WordPieceDecoder() = default;
  explicit WordPieceDecoder(WordPieceDecoderOptions options) : options_(std::move(options)) {}

  // Gives `id` its text; a later call for the same id wins (added tokens are
  // set after the vocabulary, as HF looks them up first).
  void set_token(int32_t id, std::string text, bool special);

  // Decodes `ids`. An id without a token fails with InvalidArgument and
  // *bad_position = its index in `ids`; out is then unspecified.
  Status decode(const std::vector<int64_t>& ids, bool skip_special_tokens, std::string* out,
                size_t* bad_position) const;

  // Ids with a token are in [0, id_limit()).
  int64_t id_limit() const { return static_cast<int64_t>(tokens_.size()); }

 private:
  enum Kind : uint8_t { kNone, kToken, kSpecial };
  WordPieceDecoderOptions options_;
  std::vector<std::string> tokens_;  // by id
  std::vector<Kind> kinds_;          // by id
};

// HF's WordPiece `cleanup` of one decoded piece (exposed for tests).
void wordpiece_cleanup(std::string* piece);

}  // namespace tessera::model
