// The WordPiece decoder over its own token table, for callers that build one
// by hand (tests' fake models). The Tokenizer facade reads its decoder from
// tokenizer.json instead (model/tokenizers/decoder.h); both run the same
// WordPiece step: a continuation piece ("##ing") loses its prefix and glues
// to the token before, any other token after the first gets a leading space,
// and with `cleanup` the spaces tokenization put before punctuation and
// contractions go (" ." -> ".").
#pragma once

#include <string>

#include "model/tokenizers/id_decoder.h"

namespace tessera::model {

using tokenizers::wordpiece_cleanup;

struct WordPieceDecoderOptions {
  std::string prefix = "##";
  bool cleanup = true;
};

class WordPieceDecoder : public tokenizers::IdDecoder {
 public:
  WordPieceDecoder() : WordPieceDecoder(WordPieceDecoderOptions{}) {}
  explicit WordPieceDecoder(const WordPieceDecoderOptions& options)
      : IdDecoder(tokenizers::Decoder::wordpiece(options.prefix, options.cleanup)) {}
};

}  // namespace tessera::model
