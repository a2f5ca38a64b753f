// NomicBERT (nomic-embed-text-v1 / v1.5): post-norm BERT blocks with rotary
// positions, SwiGLU and no linear biases, 8,192 positions.
#pragma once

#include "model/architectures/architecture.h"

namespace tessera::model {
const Architecture& nomic_bert_architecture();
}  // namespace tessera::model
