// The WordPiece tokenizer model of BERT-family tokenizer.json files
// (WordPiece + BertNormalizer + BertPreTokenizer), identical to HF
// `tokenizers` in ids and offsets. One pass over a span of text: each
// character is normalized and split into words on the fly, and every word
// goes through WordPiece. ASCII takes a table-driven fast path derived from
// the general one at load, so the two cannot disagree.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "model/tokenizers/tokenizer_model.h"
#include "model/tokenizers/wordpiece/bert_normalizer.h"
#include "model/tokenizers/wordpiece/wordpiece.h"

namespace tessera::model::tokenizers {

class WordPieceTokenizer final : public TokenizerModel {
 public:
  WordPieceTokenizer(WordPiece wordpiece, const BertNormalizerOptions& normalizer,
                     std::vector<std::pair<std::string, int32_t>> vocab);

  Status tokenize(std::string_view text, size_t begin, size_t end, std::vector<TokenSpan>* out,
                  WorkLimit* limit) const override;
  void for_each_token(const std::function<void(std::string_view, int32_t)>& fn) const override {
    for (const auto& [token, id] : vocab_) fn(token, id);
  }
  std::optional<int32_t> token_to_id(std::string_view token) const override {
    return wordpiece_.find(token);
  }
  std::optional<int32_t> unk_id() const override { return wordpiece_.unk_id(); }
  std::string describe() const override;
  Status set_normalized_added_tokens(std::vector<AddedToken> tokens) override;

 private:
  // What an ASCII byte does, precomputed from the general path at load.
  struct AsciiRule {
    enum Action : uint8_t { kDrop, kSplit, kIsolate, kAppend } action;
    char byte;  // the normalized byte for kIsolate / kAppend
  };
  struct Scratch;

  // The single pass over raw text[begin, end) (no added token inside).
  Status tokenize_words(std::string_view text, size_t begin, size_t end,
                        std::vector<TokenSpan>* out, WorkLimit* limit) const;
  // Whether text[begin, end) may normalize to something holding a
  // normalized added token: any non-ASCII byte, or an ASCII byte whose
  // normalization starts one.
  bool may_hold_normalized_token(std::string_view text, size_t begin, size_t end) const;

  WordPiece wordpiece_;
  BertNormalizer normalizer_;
  std::vector<std::pair<std::string, int32_t>> vocab_;  // file order, for decoding
  std::array<AsciiRule, 128> ascii_{};
  AddedTokenMatcher normalized_added_;         // contents normalized
  std::array<bool, 128> starts_normalized_{};  // see may_hold_normalized_token
};

}  // namespace tessera::model::tokenizers
