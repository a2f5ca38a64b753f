// The sequence-classification head of cross-encoders (BERT's pooler +
// classifier, RoBERTa's classification head: the same computation):
//   scores = out(tanh(dense(first token's state)))
// and ModernBERT's (NetworkConfig::classifier): the first token or the mean
// of all, then out(LayerNorm(gelu(dense(x)))).
// Raw logits, no activation: sentence-transformers' CrossEncoder applies
// none for one label, TEI's /rerank applies a sigmoid unless raw_scores.
#pragma once

#include <cstdint>

#include "model/config.h"
#include "model/weights.h"
#include "tessera/context.h"
#include "tessera/status.h"

namespace tessera::model {

// hidden: packed [T, h]; sequence s starts at row cu_seqlens[s]. Writes
// count x w.labels logits to out. Working memory from ctx ("model.activations").
Status run_classifier(const ClassifierWeights& w, const NetworkConfig& c, const float* hidden,
                      const int32_t* cu_seqlens, int64_t count, Context& ctx, float* out);

}  // namespace tessera::model
