// MPNet (all-mpnet-base-v2): BERT-shaped post-LN layers whose attention adds
// a relative-position bias, one table of buckets shared by every layer,
// passed to the dispatcher as the contract's additive `bias`
// (layers/relative_position_bias.h). Positions from padding_idx + 1, no
// token types.
#pragma once

#include "model/architectures/architecture.h"

namespace tessera::model {
const Architecture& mpnet_architecture();
}  // namespace tessera::model
