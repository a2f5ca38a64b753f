// The unit every tokenizer produces: a token id and where it came from.
#pragma once

#include <cstdint>

namespace tessera::model {

// A token and the byte range [begin, end) of the original UTF-8 text it comes
// from. Special tokens added by a post-processor have begin = end = 0, as in HF.
struct TokenSpan {
  int32_t id;
  int64_t begin;
  int64_t end;
  // The token does not begin a word (WordPiece "##ing", a later byte-level
  // BPE piece of one pre-tokenized word, a Unigram piece after the first of
  // its Metaspace word): a chunk must not start here (nor end just before it).
  bool continues_word = false;
};

}  // namespace tessera::model
