// Registration of the Unigram folder (see tokenizer_model.h).
#pragma once

#include "model/tokenizers/tokenizer_model.h"

namespace tessera::model::tokenizers {

// model.type "Unigram": SentencePiece (XLM-RoBERTa, T5, ...).
const TokenizerType& unigram_tokenizer_type();

}  // namespace tessera::model::tokenizers
