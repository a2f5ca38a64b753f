// SPLADE on the masked-LM head: for each sequence and each vocabulary entry,
//   w[v] = max over the sequence's tokens of log(1 + relu(logit[t, v]))
// with logit = decoder(LayerNorm(act(transform(hidden)))) + bias, as
// sentence-transformers' SpladePooling (max, relu) and TEI's splade pooling.
// The [tokens, vocabulary] logits are never held whole: blocks of rows
// are reduced into the output as they are made.
#pragma once

#include <cstdint>

#include "model/config.h"
#include "model/weights.h"
#include "tessera/context.h"
#include "tessera/status.h"

namespace tessera::model {

// hidden: packed [T, H]; sequence s owns rows cu_seqlens[s] .. cu_seqlens[s+1].
// Writes count x vocab_size floats (mostly zeros) to out.
Status run_splade(const MaskedLmWeights& w, const NetworkConfig& c, const float* hidden,
                  const int32_t* cu_seqlens, int64_t count, Context& ctx, float* out);

}  // namespace tessera::model
