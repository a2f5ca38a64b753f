#include "pipeline/model_kind.h"

namespace tessera {

const char* model_kind_name(ModelKind kind) {
  switch (kind) {
    case ModelKind::kEmbedding: return "embedding";
    case ModelKind::kReranker: return "reranker";
    case ModelKind::kClassifier: return "classifier";
    case ModelKind::kSparse: return "sparse";
  }
  return "unknown";
}

namespace pipeline {

ModelKind model_kind(const EmbeddingModel& model) {
  switch (model.head()) {
    case model::HeadKind::kSequenceClassification:
      // TEI's rule (router/src/lib.rs): one label ranks, several classify.
      return model.num_labels() == 1 ? ModelKind::kReranker : ModelKind::kClassifier;
    case model::HeadKind::kMaskedLm: return ModelKind::kSparse;
    case model::HeadKind::kNone: break;
  }
  return ModelKind::kEmbedding;
}

std::string describe_kind(const EmbeddingModel& model) {
  switch (model_kind(model)) {
    case ModelKind::kReranker: return "a reranker (sequence classification, 1 label)";
    case ModelKind::kClassifier:
      return "a classifier (sequence classification, " + std::to_string(model.num_labels()) +
             " labels)";
    case ModelKind::kSparse: return "a sparse (SPLADE, masked-LM head) model";
    case ModelKind::kEmbedding: break;
  }
  return "an embedding model";
}

Status require_kind(const EmbeddingModel& model, ModelKind a, ModelKind b, const std::string& what,
                    const std::string& needs) {
  const ModelKind kind = model_kind(model);
  if (kind == a || kind == b) return Status::Ok();
  return unsupported(what + " needs " + needs + "; this model is " + describe_kind(model));
}

}  // namespace pipeline
}  // namespace tessera
