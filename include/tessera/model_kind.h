// What a loaded model does with text, from its head (config.json
// `architectures`): TEI's model_type, and which Embedder calls it answers.
#pragma once

namespace tessera {

enum class ModelKind {
  kEmbedding,   // *Model: one dense vector per text (Embedder::embed, embed_documents)
  kReranker,    // *ForSequenceClassification, 1 label: cross-encoder scores (Embedder::score)
  kClassifier,  // *ForSequenceClassification, 2+ labels: per-label logits (Embedder::score)
  kSparse,      // *ForMaskedLM as SPLADE: sparse vectors (Embedder::embed_sparse)
};

// "embedding", "reranker", "classifier", "sparse".
const char* model_kind_name(ModelKind kind);

}  // namespace tessera
