// The seam between the server and a model. The batcher needs only
// BatchEmbedder ("embed a packed batch of token sequences"); the routes also
// need the tokenizer and the facts /info reports. The real implementation
// wraps model::Encoder (encoder_model.h); tests use a fake.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/status.h"

namespace tessera::server {

class BatchEmbedder {
 public:
  virtual ~BatchEmbedder() = default;
  virtual int dim() const = 0;
  // sequences: token ids, each [CLS] ... [SEP], 1..max_length tokens. Writes
  // sequences.size() x dim() floats to out, row i for sequence i. Called from
  // the batcher thread only.
  virtual Status embed(const std::vector<std::vector<int32_t>>& sequences, float* out) = 0;
};

// One token of an input text: its id and byte offsets [begin, end) in the text.
struct TextToken {
  int32_t id = 0;
  int64_t begin = 0;
  int64_t end = 0;
};

struct ModelInfo {
  std::string id;          // "all-MiniLM-L6-v2": reported as "model"
  std::string dir;         // where it was loaded from
  int dim = 0;
  int max_length = 0;      // tokens, [CLS] and [SEP] included
  bool normalizes = false;  // the model itself L2-normalizes its rows
  std::string pooling;     // "mean", "cls", "max"
  size_t weight_bytes = 0;
  std::string weights = "f32";  // precision of the Linear weights: "f32" or "bf16"
};

class ServedModel : public BatchEmbedder {
 public:
  virtual const ModelInfo& info() const = 0;
  // Tokens of `text` without special tokens. Thread-safe (HTTP threads call
  // it concurrently). Errors (e.g. invalid UTF-8) name the problem.
  virtual Status tokenize(std::string_view text, std::vector<TextToken>* out) const = 0;
  virtual int32_t cls_id() const = 0;
  virtual int32_t sep_id() const = 0;
  // Surface form of a special token ("[CLS]") for /tokenize.
  virtual std::string special_text(int32_t id) const = 0;
};

}  // namespace tessera::server
