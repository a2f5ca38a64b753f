// The seam between the Tokenizer facade (model/tokenizer.h) and one tokenizer
// model folder (wordpiece/, bpe/, unigram/). The facade owns what HF applies
// around every model: added tokens, the post-processor (specials, pairs,
// truncation) and the decoder. A folder owns the rest: its model, and the
// normalizer and pre-tokenizer it runs in front of it (WordPiece fuses them
// into one pass; BPE and Unigram use the shared steps of pipeline.h).
//
// A folder is registered by its CMakeLists.txt (tessera_add_tokenizer in
// src/model/tokenizers/CMakeLists.txt), which generates the list returned by
// builtin_tokenizer_types(): deleting a folder leaves a working build whose
// facade refuses that model.type, naming the ones that remain.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/tokenizer_added_tokens.h"
#include "model/tokenizers/json_fields.h"
#include "model/tokenizers/token_span.h"
#include "model/tokenizers/work_limit.h"
#include "tessera/status.h"

namespace tessera::model::tokenizers {

class TokenizerModel {
 public:
  virtual ~TokenizerModel() = default;

  // Appends the tokens of text[begin, end), a span holding no added token,
  // with byte offsets into `text` (valid UTF-8). One call per span: the
  // per-character work stays inside the implementation. `limit` (may be
  // null) is told the bytes worked through between words; its refusal
  // stops the span and is returned.
  virtual Status tokenize(std::string_view text, size_t begin, size_t end,
                          std::vector<TokenSpan>* out, WorkLimit* limit) const = 0;

  // The vocabulary (token text -> id), for decoding and trim_offsets.
  virtual void for_each_token(
      const std::function<void(std::string_view token, int32_t id)>& fn) const = 0;
  virtual std::optional<int32_t> token_to_id(std::string_view token) const = 0;
  virtual std::optional<int32_t> unk_id() const = 0;

  // "model: ...", "normalizer: ...", "pre_tokenizer: ..." lines for --explain.
  virtual std::string describe() const = 0;

  // Added tokens HF matches in the normalized text (normalized: true, as
  // all-mpnet-base-v2's "<unk>"): the model finds them after its normalizer,
  // inside each span, their contents normalized as the text is. Called at
  // most once, at load, before the model is shared.
  virtual Status set_normalized_added_tokens(std::vector<AddedToken> tokens) = 0;
};

// What a folder's loader is given: the tokenizer.json root (already parsed
// and checked to be an object) and the accessors that name its path.
struct LoadContext {
  const nlohmann::json& root;
  const JsonFields& fields;
};

struct TokenizerType {
  const char* model_type;  // tokenizer.json model.type ("WordPiece")
  // Reads model, normalizer and pre_tokenizer of ctx.root.
  Status (*load)(const LoadContext& ctx, std::unique_ptr<TokenizerModel>* out);
  // A file read when the directory has no tokenizer.json ("vocab.txt"), or
  // nullptr; convert() turns it into the equivalent tokenizer.json.
  const char* fallback_file = nullptr;
  Status (*convert)(const std::string& path, nlohmann::json* root) = nullptr;
};

// Every folder built into this binary, in folder-name order (generated).
std::span<const TokenizerType* const> builtin_tokenizer_types();

}  // namespace tessera::model::tokenizers
