// BERT (BertModel, BertForSequenceClassification, BertForMaskedLM): absolute
// positions from 0, token type embeddings, WordPiece tokenizers.
#pragma once

#include "model/architectures/architecture.h"

namespace tessera::model {
const Architecture& bert_architecture();
}  // namespace tessera::model
