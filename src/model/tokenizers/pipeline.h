// HF's tokenization pipeline for the models that use the shared steps (BPE,
// Unigram): normalizer -> pre-tokenizer -> model, word by word. The model
// folder supplies only its WordModel; offsets come from the alignments the
// steps keep (normalized_text.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/tokenizers/normalizers.h"
#include "model/tokenizers/pre_tokenizers.h"
#include "model/tokenizers/tokenizer_model.h"

namespace tessera::model::tokenizers {

// A tokenizer model proper: one pre-tokenized word to vocabulary pieces.
class WordModel {
 public:
  struct Piece {
    int32_t id;
    size_t begin;  // byte range in the word
    size_t end;
  };
  virtual ~WordModel() = default;
  // Appends the pieces of `word` (non-empty, valid UTF-8).
  virtual void tokenize(std::string_view word, std::vector<Piece>* out) const = 0;
  virtual void for_each_token(const std::function<void(std::string_view, int32_t)>& fn) const = 0;
  virtual std::optional<int32_t> token_to_id(std::string_view token) const = 0;
  virtual std::optional<int32_t> unk_id() const = 0;
  virtual std::string describe() const = 0;  // "BPE (4000 entries, 3700 merges)"
};

class PipelineTokenizer final : public TokenizerModel {
 public:
  PipelineTokenizer(Normalizer normalizer, PreTokenizer pre_tokenizer,
                    std::unique_ptr<const WordModel> model)
      : normalizer_(std::move(normalizer)),
        pre_tokenizer_(std::move(pre_tokenizer)),
        model_(std::move(model)) {}

  // Reads normalizer and pre_tokenizer of ctx.root around `model`.
  static Status create(const LoadContext& ctx, std::unique_ptr<const WordModel> model,
                       std::unique_ptr<TokenizerModel>* out);

  Status tokenize(std::string_view text, size_t begin, size_t end, std::vector<TokenSpan>* out,
                  WorkLimit* limit) const override;
  void for_each_token(const std::function<void(std::string_view, int32_t)>& fn) const override {
    model_->for_each_token(fn);
  }
  std::optional<int32_t> token_to_id(std::string_view token) const override {
    return model_->token_to_id(token);
  }
  std::optional<int32_t> unk_id() const override { return model_->unk_id(); }
  std::string describe() const override;
  Status set_normalized_added_tokens(std::vector<AddedToken> tokens) override;

 private:
  // Pre-tokenizer and model over one normalized piece.
  Status tokenize_piece(NormalizedText piece, std::vector<TokenSpan>* out, WorkLimit* limit) const;

  Normalizer normalizer_;
  PreTokenizer pre_tokenizer_;
  std::unique_ptr<const WordModel> model_;
  AddedTokenMatcher normalized_added_;  // contents normalized
};

}  // namespace tessera::model::tokenizers
