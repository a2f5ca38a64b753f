// RoBERTa, XLM-RoBERTa and CamemBERT (one shape: BERT's layers, positions
// from padding_idx + 1, a single token type). Their tokenizers differ
// (byte-level BPE, SentencePiece Unigram) and live in tokenizers/.
#pragma once

#include "model/architectures/architecture.h"

namespace tessera::model {
const Architecture& roberta_architecture();
}  // namespace tessera::model
