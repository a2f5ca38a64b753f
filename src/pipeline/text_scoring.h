// Texts -> cross-encoder scores and SPLADE vectors (TEI's /rerank, /predict
// and /embed_sparse, `tessera rerank`, Embedder::score / embed_sparse): the
// one place inputs of a head are framed, checked and batched.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/embedding_model.h"
#include "pipeline/text_embedding.h"
#include "tessera/context.h"
#include "tessera/status.h"

namespace tessera::pipeline {

// One input of a sequence-classification model: a text alone, or a pair
// (query, document) framed [CLS] text [SEP] pair [SEP].
struct ScoreInput {
  std::string text;
  std::optional<std::string> pair;
};

// Frames each input: a text as frame_texts does (type ids all 0), a pair by
// the tokenizer's pair template (type ids 0, then 1). Over max_tokens a pair
// is cut longest-first when options.truncate, else refused naming it
// (options.field + "[i]"), with *failed its index.
Status frame_score_inputs(const EmbeddingModel& model, const std::vector<ScoreInput>& inputs,
                          const TextOptions& options, std::vector<std::vector<int32_t>>* sequences,
                          std::vector<std::vector<int32_t>>* type_ids, int64_t* tokens,
                          size_t* failed = nullptr);

// Raw logits: inputs.size() x model.num_labels() floats to out. Needs a
// reranker or classifier (the error names the model's kind otherwise).
Status score_inputs(EmbeddingModel& model, const std::vector<ScoreInput>& inputs,
                    const TextOptions& options, Context& ctx, float* out);

// SPLADE vectors of texts framed as embed_texts frames them: sink(i, row)
// gets text i's model.sparse_dim() floats. Needs a sparse model.
Status embed_sparse_texts(EmbeddingModel& model, const std::vector<std::string>& texts,
                          const TextOptions& options, Context& ctx, const RowSink& sink);

// The nonzero entries of row[0, n), by increasing index (TEI's sparsify).
void sparsify(const float* row, int64_t n, std::vector<int32_t>* indices,
              std::vector<float>* values);

}  // namespace tessera::pipeline
