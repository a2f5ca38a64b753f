// What tessera recognises in a model directory, step by step, for
// `tessera models --explain DIR`: the architecture and its head, the shapes,
// the position scheme, the tokenizer, pooling and the outputs it can give;
// or the first step that failed and exactly why.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tessera/context.h"
#include "tessera/status.h"

namespace tessera::model {

struct ModelExplanation {
  // ("architecture", "mpnet (model_type \"mpnet\"; MPNetForMaskedLM)") ... in order.
  std::vector<std::pair<std::string, std::string>> facts;
  Status status;  // OK when the whole model loads (weights included)
};

// Reads the configs, loads the tokenizer and the weights (f32) with `ctx`'s
// allocator and releases them again. Never fails itself: the outcome is in
// the returned status.
ModelExplanation explain_model(const std::string& model_dir, Context& ctx);

// The architectures and tokenizer models this build supports, one per line.
std::string supported_models();

}  // namespace tessera::model
