// Finding and reading the tokenizer of a model directory: tokenizer.json, or
// a file a tokenizer folder converts to one (vocab.txt -> BERT's defaults);
// then the parts HF applies around every model: added tokens and padding.
// Every error names the file and the field.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/tokenizer_added_tokens.h"
#include "model/tokenizers/json_fields.h"
#include "model/tokenizers/tokenizer_model.h"
#include "tessera/status.h"

namespace tessera::model {

struct TokenizerSource {  // NOLINT(bugprone-exception-escape): json's copy may throw
  std::string path;       // the file read, for messages
  nlohmann::json root;    // tokenizer.json (or its equivalent), a JSON object
  const tokenizers::TokenizerType* type = nullptr;  // the folder for model.type
};

// Reads <dir>/tokenizer.json or a fallback file; refuses a model.type no
// folder of this build handles, naming the ones it has.
Status read_tokenizer_source(const std::string& model_dir, TokenizerSource* out);

// added_tokens of tokenizer.json.
Status read_added_tokens(const tokenizers::JsonFields& f, const nlohmann::json& root,
                         std::vector<AddedToken>* out);

// padding.pad_id, when given.
Status read_pad_id(const tokenizers::JsonFields& f, const nlohmann::json& root,
                   std::optional<int32_t>* out);

}  // namespace tessera::model
