// DistilBERT (model_type "distilbert"): msmarco-distilbert, multi-qa-distilbert,
// distiluse-base-multilingual. BERT's post-norm layers under other names and
// config fields, no token types, no pooler.
#pragma once

#include "model/architectures/architecture.h"

namespace tessera::model {

const Architecture& distilbert_architecture();

}  // namespace tessera::model
