// EncoderModel: the pipeline's EmbeddingModel backed by a real
// model::Encoder, running attention through a Dispatcher.
#pragma once

#include <memory>
#include <string>

#include "model/encoder.h"
#include "pipeline/embedding_model.h"
#include "tessera/dispatcher.h"

namespace tessera::pipeline {

class EncoderModel final : public EmbeddingModel {
 public:
  EncoderModel(std::unique_ptr<model::Encoder> encoder, Dispatcher& attention)
      : encoder_(std::move(encoder)), attention_(attention) {
    if (encoder_->head() == model::HeadKind::kSequenceClassification) {
      labels_ = encoder_->config().network.id2label;
    }
  }

  int dim() const override { return encoder_->dim(); }
  int token_dim() const override { return encoder_->hidden_size(); }
  int max_seq_length() const override { return encoder_->max_seq_length(); }
  bool normalized() const override { return encoder_->config().normalize; }
  const model::SequenceFrame& frame() const override { return encoder_->tokenizer().frame(); }
  const model::Prompts& prompts() const override { return encoder_->config().prompts; }
  Status tokenize(std::string_view text, std::vector<model::TokenSpan>* out,
                  model::WorkLimit* limit = nullptr) const override {
    return encoder_->tokenizer().tokenize(text, out, limit);
  }
  Status decode(const std::vector<int64_t>& ids, bool skip_special_tokens, std::string* out,
                size_t* bad_position) const override {
    return encoder_->tokenizer().decode(ids, skip_special_tokens, out, bad_position);
  }
  Status embed(const std::vector<std::vector<int32_t>>& sequences, Context& ctx,
               float* out) override {
    return encoder_->embed(sequences, attention_, ctx, out);
  }
  Status embed_tokens(const std::vector<std::vector<int32_t>>& sequences, Context& ctx,
                      float* out) override {
    return encoder_->embed_tokens(sequences, attention_, ctx, out);
  }
  model::HeadKind head() const override { return encoder_->head(); }
  const std::vector<std::string>& labels() const override { return labels_; }
  int sparse_dim() const override {
    return head() == model::HeadKind::kMaskedLm ? encoder_->vocab_size() : 0;
  }
  Status encode_pair(std::string_view a, std::string_view b, size_t max_length,
                     std::vector<int32_t>* ids, std::vector<int32_t>* type_ids,
                     model::WorkLimit* limit = nullptr) const override;
  Status classify(const std::vector<std::vector<int32_t>>& sequences,
                  const std::vector<std::vector<int32_t>>* type_ids, Context& ctx,
                  float* out) override {
    return encoder_->classify(sequences, type_ids, attention_, ctx, out);
  }
  Status embed_sparse(const std::vector<std::vector<int32_t>>& sequences, Context& ctx,
                      float* out) override {
    return encoder_->embed_sparse(sequences, attention_, ctx, out);
  }
  const model::Encoder& encoder() const { return *encoder_; }

 private:
  std::unique_ptr<model::Encoder> encoder_;
  Dispatcher& attention_;
  std::vector<std::string> labels_;  // id2label of a classification head, else empty
};

}  // namespace tessera::pipeline
