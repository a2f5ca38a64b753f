// ModernBERT (answerdotai/ModernBERT-*, gte-modernbert, modernbert-embed):
// pre-norm blocks, GeGLU, no biases, rotary with a global and a local base,
// global attention every n-th layer and a sliding window elsewhere.
#pragma once

#include "model/architectures/architecture.h"

namespace tessera::model {
const Architecture& modernbert_architecture();
}  // namespace tessera::model
