// Registration of the WordPiece folder (see tokenizer_model.h).
#pragma once

#include "model/tokenizers/tokenizer_model.h"

namespace tessera::model::tokenizers {

// model.type "WordPiece"; a vocab.txt alone reads as BERT's defaults.
const TokenizerType& wordpiece_tokenizer_type();

}  // namespace tessera::model::tokenizers
