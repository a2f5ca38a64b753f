// Qwen2 (model_type "qwen2"): the decoder under gte-Qwen2-1.5B-instruct,
// stella_en_1.5B_v5 and other Qwen2 embedders. Qwen3's layout without its
// q/k norms, with biases on Q, K and V (not on the attention output).
#pragma once

#include "model/architectures/architecture.h"

namespace tessera::model {

const Architecture& qwen2_architecture();

}  // namespace tessera::model
