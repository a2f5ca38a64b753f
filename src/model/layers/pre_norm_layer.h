// The pre-norm layer (ModernBERT, Qwen3) over a packed (varlen) batch:
//   hidden += attention part(N1(hidden))     (ModernBERT's layer 0: no N1)
//   hidden += FFN part(N2(hidden))
// The norms write the scratch's `normed` rows; the residual stream stays
// unnormalized until the network's final norm (encoder.cc).
#pragma once

#include "model/layers/layer_parts.h"

namespace tessera::model {

Status run_pre_norm_layer(const LayerRun& run);

}  // namespace tessera::model
