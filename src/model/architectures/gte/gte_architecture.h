// GTE (model_type "gte", transformers 5's port of Alibaba's "new" model):
// gte-base-en-v1.5, gte-large-en-v1.5, gte-multilingual-base.
#pragma once

#include "model/architectures/architecture.h"

namespace tessera::model {

const Architecture& gte_architecture();

}  // namespace tessera::model
