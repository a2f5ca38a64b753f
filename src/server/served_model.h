// The server's model is the pipeline's EmbeddingModel
// (pipeline/embedding_model.h), the one `tessera embed` and the Embedder API
// use: one tokenizer, one framing (its template's specials), one normalisation and
// the same windows. This adds only the facts /info reports about it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "model/encoder.h"

namespace tessera::server {

struct ModelInfo {
  std::string id;   // "all-MiniLM-L6-v2": reported as "model"
  std::string dir;  // where it was loaded from
  int dim = 0;
  int max_length = 0;       // tokens, the specials included
  int64_t vocab_size = 0;   // token ids a request may send: [0, vocab_size)
  bool normalizes = false;  // the model itself L2-normalizes its rows
  std::string pooling;      // "mean", "cls", "max"
  size_t weight_bytes = 0;
  std::string weights = "f32";  // precision of the Linear weights: "f32", "bf16" or "int8"
};

// The facts of a loaded encoder.
ModelInfo describe_model(const model::Encoder& encoder);

}  // namespace tessera::server
