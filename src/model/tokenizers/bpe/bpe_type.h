// Registration of the BPE folder (see tokenizer_model.h).
#pragma once

#include "model/tokenizers/tokenizer_model.h"

namespace tessera::model::tokenizers {

// model.type "BPE": byte-level (RoBERTa, GPT-2) and character BPE.
const TokenizerType& bpe_tokenizer_type();

}  // namespace tessera::model::tokenizers
