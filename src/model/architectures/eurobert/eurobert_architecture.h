// EuroBERT (model_type "eurobert"): a bidirectional Llama-style encoder
// (EuroBERT-210m / 610m / 2.1B and the embedders fine-tuned from them).
#pragma once

#include "model/architectures/architecture.h"

namespace tessera::model {

const Architecture& eurobert_architecture();

}  // namespace tessera::model
