// A pipeline model's kind (tessera/model_kind.h) and the error every
// frontend gives when a model of another kind is asked for: it names the
// model's kind and what the call needs, so "tessera rerank" with an
// embedding model, /embed with a reranker and Embedder::score on SPLADE all
// say the same thing.
#pragma once

#include <string>

#include "pipeline/embedding_model.h"
#include "tessera/model_kind.h"
#include "tessera/status.h"

namespace tessera::pipeline {

ModelKind model_kind(const EmbeddingModel& model);

// "a reranker (sequence classification, 1 label)", "an embedding model", ...
std::string describe_kind(const EmbeddingModel& model);

// Ok when the model is of kind `a` or `b`; else Unsupported: "<what> needs
// <needs>; this model is <describe_kind>".
Status require_kind(const EmbeddingModel& model, ModelKind a, ModelKind b, const std::string& what,
                    const std::string& needs);
inline Status require_kind(const EmbeddingModel& model, ModelKind a, const std::string& what,
                           const std::string& needs) {
  return require_kind(model, a, a, what, needs);
}

}  // namespace tessera::pipeline
