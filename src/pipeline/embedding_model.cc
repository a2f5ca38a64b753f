// The head methods' defaults (an embedding model has none of them) and
// EncoderModel's pair framing.
#include "pipeline/embedding_model.h"

#include <algorithm>

#include "pipeline/encoder_model.h"

namespace tessera::pipeline {

namespace {

Status no_head(const char* what) {
  return unsupported(std::string(what) + " needs a model with that head; this one has none");
}

}  // namespace

const std::vector<std::string>& EmbeddingModel::labels() const {
  static const std::vector<std::string> kNoLabels;
  return kNoLabels;
}

const model::Prompts& EmbeddingModel::prompts() const {
  static const model::Prompts kNoPrompts;
  return kNoPrompts;
}

Status EmbeddingModel::encode_pair(std::string_view, std::string_view, size_t,
                                   std::vector<int32_t>*, std::vector<int32_t>*,
                                   model::WorkLimit*) const {
  return no_head("a text pair");
}

Status EmbeddingModel::classify(const std::vector<std::vector<int32_t>>&,
                                const std::vector<std::vector<int32_t>>*, Context&, float*) {
  return no_head("scoring");
}

Status EmbeddingModel::embed_sparse(const std::vector<std::vector<int32_t>>&, Context&, float*) {
  return no_head("a sparse embedding");
}

Status EncoderModel::encode_pair(std::string_view a, std::string_view b, size_t max_length,
                                 std::vector<int32_t>* ids, std::vector<int32_t>* type_ids,
                                 model::WorkLimit* limit) const {
  std::vector<model::TokenSpan> spans;
  TESSERA_RETURN_IF_ERROR(
      encoder_->tokenizer().encode_pair(a, b, max_length, &spans, type_ids, limit));
  // A tokenizer whose model_input_names omits token_type_ids gives the model
  // none, which it reads as zeros (transformers' behaviour); a model without
  // token type embeddings (ModernBERT) has nothing to read them with.
  const model::ModelConfig& c = encoder_->config();
  if (type_ids != nullptr && (!c.token_type_ids || c.network.type_vocab_size <= 1)) {
    std::fill(type_ids->begin(), type_ids->end(), 0);
  }
  ids->clear();
  ids->reserve(spans.size());
  for (const model::TokenSpan& t : spans) ids->push_back(t.id);
  return Status::Ok();
}

}  // namespace tessera::pipeline
