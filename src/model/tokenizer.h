// The tokenizer of a model directory, identical to HF `tokenizers` (ids and
// offsets) for the tokenizer.json files of the embedding models tessera
// serves: WordPiece (BERT, MPNet), byte-level BPE (RoBERTa, GPT-2 style) and
// SentencePiece Unigram (XLM-RoBERTa). The facade applies what HF applies
// around every model -- added tokens found in the raw text, the
// post-processor's special tokens and truncation, the decoder -- and hands
// each span between added tokens to the model folder chosen by model.type
// (model/tokenizers/tokenizer_model.h): one virtual call per span.
// Thread-safe: every method is const. Cheap to move and to copy (the loaded
// model is shared and immutable).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/tokenizer_added_tokens.h"
#include "model/tokenizers/id_decoder.h"
#include "model/tokenizers/post_processor.h"
#include "model/tokenizers/token_span.h"
#include "model/tokenizers/tokenizer_model.h"
#include "tessera/status.h"

namespace tessera::model {

using tokenizers::SequenceFrame;
using tokenizers::WorkLimit;

class Tokenizer {
 public:
  // Loads <dir>/tokenizer.json or, when absent, <dir>/vocab.txt with BERT's
  // defaults (lowercase, strip accents, clean text, CJK characters). Every
  // token id must be below `id_limit` (the model's config.json vocab_size,
  // where the caller knows it), checked before anything is sized by the ids.
  static constexpr int64_t kMaxIds = int64_t{1} << 24;  // beyond any real vocabulary
  static Status load(const std::string& model_dir, Tokenizer* out, int64_t id_limit = kMaxIds);

  // Tokens of `text` without special tokens, with byte offsets; no
  // truncation. Fails, naming the byte offset, on invalid UTF-8. `limit`
  // (tokenizers/work_limit.h; may be null) bounds the work: its refusal is
  // returned as it is, the tokens so far left in *out.
  Status tokenize(std::string_view text, std::vector<TokenSpan>* out,
                  WorkLimit* limit = nullptr) const;

  // The single-sequence template ([CLS] A [SEP], <s> A </s>) truncated to
  // max_length tokens, specials included, as HF does with truncation=True.
  // max_length must leave room for the specials.
  Status encode(std::string_view text, size_t max_length, std::vector<TokenSpan>* out,
                WorkLimit* limit = nullptr) const;

  // The pair template ([CLS] A [SEP] B [SEP] with type ids 0.. 1..;
  // <s> A </s></s> B </s> with type ids all 0), truncated to max_length with
  // HF's default longest_first strategy: exactly what a fast HF tokenizer
  // gives for tokenizer(a, b, truncation=True, max_length=N), as
  // cross-encoder rerankers use it. Offsets of a's tokens are bytes of `a`,
  // of b's tokens bytes of `b`; specials have 0..0. type_ids may be null.
  Status encode_pair(std::string_view a, std::string_view b, size_t max_length,
                     std::vector<TokenSpan>* out, std::vector<int32_t>* type_ids,
                     WorkLimit* limit = nullptr) const;

  // Ids back to text as HF `tokenizers` decodes them (tokenizers/decoder.h);
  // an unknown id fails, *bad_position its index in `ids`.
  Status decode(const std::vector<int64_t>& ids, bool skip_special_tokens, std::string* out,
                size_t* bad_position) const {
    return tokens_.decode(ids, skip_special_tokens, out, bad_position);
  }

  // What was recognised, one "key: value" line each (model, normalizer,
  // pre_tokenizer, post_processor, decoder, vocab size, special tokens): for
  // `tessera models --explain`.
  std::string describe() const;

  // The specials the single template puts before and after a text (BERT
  // [CLS] / [SEP], Qwen3 none / <|endoftext|>): how windows are framed.
  const SequenceFrame& frame() const { return post_.single_frame(); }
  // The first and last special token of the single template; -1 when it
  // adds none (== each other when it adds one).
  int32_t cls_id() const { return post_.first_special(); }
  int32_t sep_id() const { return post_.last_special(); }
  int32_t pad_id() const { return pad_id_; }
  // -1 when the model has no unknown token (byte-level BPE needs none).
  int32_t unk_id() const { return unk_id_; }
  // One more than the largest token id: the rows an embedding table needs.
  size_t vocab_size() const { return vocab_size_; }

 private:
  // Appends the tokens of text (no specials), offsets trimmed as the
  // post-processor asks.
  Status tokenize_append(std::string_view text, std::vector<TokenSpan>* out,
                         WorkLimit* limit) const;

  std::shared_ptr<const tokenizers::TokenizerModel> model_;
  AddedTokenMatcher added_;
  tokenizers::PostProcessor post_;
  tokenizers::IdDecoder tokens_;
  int32_t pad_id_ = 0;
  int32_t unk_id_ = -1;
  size_t vocab_size_ = 0;
  std::string source_;  // the file loaded
};

}  // namespace tessera::model
