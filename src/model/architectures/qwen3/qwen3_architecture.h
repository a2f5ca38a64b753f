// Qwen3 (Qwen3-Embedding-0.6B / 4B / 8B): a decoder run as an embedder --
// pre-RMSNorm blocks, causal grouped-query attention with per-head RMSNorm
// of Q and K, rotary positions, SwiGLU, no biases; last-token pooling.
#pragma once

#include "model/architectures/architecture.h"

namespace tessera::model {
const Architecture& qwen3_architecture();
}  // namespace tessera::model
