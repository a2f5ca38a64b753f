// The post-norm layer (BERT, RoBERTa, MPNet, NomicBERT) over a packed
// (varlen) batch: no padding rows exist, so no FLOP is spent on them.
//   hidden = N1(hidden + attention part(hidden))
//   hidden = N2(hidden + FFN part(hidden))
// The parts (layer_parts.h) add into hidden in their last product's
// epilogue; the norms run in place. MPNet adds its relative-position bias
// in attention, NomicBERT rotates Q and K and gates its FFN.
#pragma once

#include "model/layers/layer_parts.h"

namespace tessera::model {

Status run_post_norm_layer(const LayerRun& run);

}  // namespace tessera::model
