// Prompts (config_sentence_transformers.json): the text sentence-transformers
// prepends to every input before tokenizing (encode(prompt_name=...) and
// encode_query / encode_document). The prompt is part of the text, so its
// tokens count toward the model's limit and are pooled with the rest,
// exactly as sentence-transformers and TEI do.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/config.h"
#include "pipeline/embedding_model.h"
#include "tessera/status.h"

namespace tessera::pipeline {

// A request's choice: an explicit prompt text wins over a prompt name; with
// neither, the model's default_prompt_name applies (none: no prompt).
struct PromptChoice {
  std::optional<std::string> name;
  std::optional<std::string> text;
};

// The prompt text to prepend ("" for none). An unknown name is refused naming
// the ones the model defines; `field` names the request field ("prompt_name",
// "--prompt-name"). A model that pools without its prompt tokens
// (include_prompt false) refuses any prompt.
Status resolve_prompt(const model::Prompts& prompts, const PromptChoice& choice,
                      const std::string& field, std::string* text);

// The prompt's tokens alone ("" has none), for inputs that are not
// tokenized with it: document windows and token-id inputs put them right
// after the frame's prefix specials.
Status prompt_tokens(const EmbeddingModel& model, const std::string& prompt,
                     std::vector<model::TokenSpan>* out);

// "query, document" (or "none"): the names a model defines, for messages.
std::string prompt_names(const model::Prompts& prompts);

}  // namespace tessera::pipeline
