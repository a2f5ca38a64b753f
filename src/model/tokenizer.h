// The BERT tokenizer of a model directory, identical to HF `tokenizers`
// (ids and offsets) for WordPiece + BertNormalizer + BertPreTokenizer
// tokenizers. One pass over the text: added tokens are found in the raw text,
// each character is normalized and split into words on the fly, and every
// word goes through WordPiece. Thread-safe: tokenize/encode are const.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/bert_normalizer.h"
#include "model/tokenizer_added_tokens.h"
#include "model/wordpiece.h"
#include "model/wordpiece_decoder.h"
#include "tessera/status.h"

namespace tessera::model {

// A token and the byte range [begin, end) of the original UTF-8 text it comes
// from. [CLS] and [SEP] added by encode() have begin = end = 0, as in HF.
struct TokenSpan {
  int32_t id;
  int64_t begin;
  int64_t end;
  // A continuation piece ("##ing"): its word began in an earlier token, so a
  // chunk must not start here (nor end just before it).
  bool continues_word = false;
};

class Tokenizer {
 public:
  // Loads <dir>/tokenizer.json or, when absent, <dir>/vocab.txt with BERT's
  // defaults (lowercase, strip accents, clean text, CJK characters).
  static Status load(const std::string& model_dir, Tokenizer* out);

  // Word-piece tokens of `text` without [CLS]/[SEP], with byte offsets; no
  // truncation. Fails, naming the byte offset, on invalid UTF-8.
  Status tokenize(std::string_view text, std::vector<TokenSpan>* out) const;

  // [CLS] tokens [SEP], truncated to max_length tokens (the two specials
  // included) as HF does with truncation=True. max_length must be >= 2.
  Status encode(std::string_view text, size_t max_length, std::vector<TokenSpan>* out) const;

  // A pair (cross-encoders): [CLS] a [SEP] b [SEP] with type ids 0 for the
  // first segment and 1 for the second, truncated to max_length tokens
  // (specials included) with HF's default `longest_first` strategy, as
  // `tokenizer(a, b, truncation=True, max_length=N)`. Offsets of b's tokens
  // are byte offsets into b. max_length must be >= 3.
  Status encode_pair(std::string_view a, std::string_view b, size_t max_length,
                     std::vector<TokenSpan>* out, std::vector<int32_t>* type_ids) const;

  // Ids back to text as HF `tokenizers` decodes them (wordpiece_decoder.h);
  // an unknown id fails, *bad_position its index in `ids`.
  Status decode(const std::vector<int64_t>& ids, bool skip_special_tokens, std::string* out,
                size_t* bad_position) const {
    return decoder_.decode(ids, skip_special_tokens, out, bad_position);
  }

  int32_t cls_id() const { return cls_id_; }
  int32_t sep_id() const { return sep_id_; }
  int32_t pad_id() const { return pad_id_; }
  int32_t unk_id() const { return wordpiece_.unk_id(); }
  // One more than the largest token id: the rows an embedding table needs.
  size_t vocab_size() const { return vocab_size_; }

 private:
  // What an ASCII byte does, precomputed from the general path at load.
  struct AsciiRule {
    enum Action : uint8_t { kDrop, kSplit, kIsolate, kAppend } action;
    char byte;  // the normalized byte for kIsolate / kAppend
  };
  struct Scratch;

  // Appends the tokens of text[begin, end) (no added tokens inside) to `out`.
  void tokenize_segment(std::string_view text, size_t begin, size_t end, Scratch* s,
                        std::vector<TokenSpan>* out) const;
  Status tokenize_append(std::string_view text, std::vector<TokenSpan>* out) const;
  void init_ascii_rules();

  WordPiece wordpiece_;
  BertNormalizer normalizer_;
  AddedTokenMatcher added_;
  WordPieceDecoder decoder_;
  std::array<AsciiRule, 128> ascii_{};
  int32_t cls_id_ = 0;
  int32_t sep_id_ = 0;
  int32_t pad_id_ = 0;
  size_t vocab_size_ = 0;
};

}  // namespace tessera::model
