// Texts -> one vector each (TEI's /embed, Embedder::embed): no windows, a
// text is one sequence framed as the model's template says ([CLS] ... [SEP],
// ... <|endoftext|>), cut to the model's limit only when
// asked. Framing and batching are the pipeline's, so a text that fits gives
// the same vector as the single chunk `tessera embed` makes of it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pipeline/embedding_model.h"
#include "tessera/context.h"
#include "tessera/status.h"

namespace tessera::pipeline {

struct TextOptions {
  bool truncate = false;       // cut a text longer than max_tokens instead of failing
  bool truncate_left = false;  // cut from its start (TEI's truncation_direction "Left")
  // Prepended to every text before tokenizing (pipeline/prompts.h), so its
  // tokens count toward max_tokens and are cut first when truncating left.
  std::string prompt;
  int max_tokens = 0;           // per text, the specials included; 0: the model's limit
  int64_t batch_tokens = 8192;  // encoder tokens per batch
  std::string field = "texts";  // names the input in messages: "texts[3]" ("texts" if one)
  std::string truncate_hint = "ask for truncation to cut it";  // ends the too-long message
  // Bounds the tokenization (a server request's CPU share); its refusal is
  // returned as it is, not as the text's fault. Null: no bound.
  model::WorkLimit* limit = nullptr;
};

// Token ids of each text, framed by model.frame() and (when asked) cut; an
// empty text is [CLS] [SEP] (its specials alone), as in
// sentence-transformers, and refused when the model adds none. The error names
// the text, its token count and the limit, and *failed (when given) its
// index. *tokens counts every id.
Status frame_texts(const EmbeddingModel& model, const std::vector<std::string>& texts,
                   const TextOptions& options, std::vector<std::vector<int32_t>>* sequences,
                   int64_t* tokens, size_t* failed = nullptr);

// Token-id inputs (OpenAI's input: [[int]]): each list is the content of
// one sequence, framed, cut and refused exactly as a text's tokens are by
// frame_texts; the prompt's tokens go before it. The ids are the caller's
// to check against the vocabulary.
Status frame_token_ids(const EmbeddingModel& model, const std::vector<std::vector<int32_t>>& ids,
                       const TextOptions& options, std::vector<std::vector<int32_t>>* sequences,
                       int64_t* tokens, size_t* failed = nullptr);

// Runs framed sequences through `run` in length-sorted batches of at most
// batch_tokens tokens (one longer sequence runs alone), `width` floats per
// output row from a tracked batch buffer; sink(i, row) gets sequence i's
// row. The way every texts-in, rows-out call batches (embed, score, sparse).
using BatchRun =
    std::function<Status(const std::vector<std::vector<int32_t>>& sequences,
                         const std::vector<std::vector<int32_t>>* type_ids, float* out)>;
using RowSink = std::function<void(int64_t index, const float* row)>;
Status run_in_batches(std::vector<std::vector<int32_t>> sequences,
                      const std::vector<std::vector<int32_t>>* type_ids, int64_t width,
                      int64_t batch_tokens, Context& ctx, const BatchRun& run, const RowSink& sink);

// Writes texts.size() x model.dim() floats to out, row i for texts[i].
Status embed_texts(EmbeddingModel& model, const std::vector<std::string>& texts,
                   const TextOptions& options, Context& ctx, float* out);

}  // namespace tessera::pipeline
