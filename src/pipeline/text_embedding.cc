#include "pipeline/text_embedding.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "pipeline/batching.h"
#include "pipeline/prompts.h"
#include "pipeline/windowing.h"
#include "tessera/allocator.h"

namespace tessera::pipeline {

namespace {

// How the token count of a too-long text is qualified: "([CLS] and [SEP]
// included)", as for every BERT-style model until now.
std::string included(int specials, bool prompt) {
  const std::string what = specials == 2 ? "[CLS] and [SEP]" : specials_phrase(specials);
  return "(" + what + (prompt ? " and the prompt" : "") + " included)";
}

}  // namespace

namespace {

// The limit of options for `model`, checked.
Status text_limit(const EmbeddingModel& model, const TextOptions& options, int* limit) {
  *limit = options.max_tokens > 0 ? options.max_tokens : model.max_seq_length();
  const int specials = model.frame().specials();
  if (*limit > model.max_seq_length() || *limit < specials + 1) {
    return invalid_argument("max_tokens = " + std::to_string(*limit) + ": must be in [" +
                            std::to_string(specials + 1) + ", " +
                            std::to_string(model.max_seq_length()) +
                            "] (the model's limit; it adds " + specials_phrase(specials) + ")");
  }
  return Status::Ok();
}

// One input's tokens (the prompt's first) -> its framed sequence: cut to
// `limit` with the specials when asked, else refused naming `name`.
Status frame_one(const EmbeddingModel& model, const std::vector<model::TokenSpan>& spans, int limit,
                 const TextOptions& options, const std::string& name, std::vector<int32_t>* seq) {
  const model::SequenceFrame& frame = model.frame();
  const int specials = frame.specials();
  const size_t content = static_cast<size_t>(limit - specials);
  if (spans.size() > content && !options.truncate) {
    return invalid_argument(name + " has " + std::to_string(spans.size() + specials) + " tokens " +
                            included(specials, !options.prompt.empty()) +
                            " but the model takes at most " + std::to_string(limit) +
                            " (max_length); " + options.truncate_hint);
  }
  const auto n = static_cast<int64_t>(spans.size());
  const int64_t kept = std::min(n, static_cast<int64_t>(content));
  const Window all = options.truncate_left ? Window{n - kept, n} : Window{0, kept};
  frame_window(spans, all, frame, seq);
  if (seq->empty()) {
    return invalid_argument(name +
                            " has no tokens (empty, or only whitespace or control "
                            "characters) and the model adds no special tokens: "
                            "nothing to embed");
  }
  return Status::Ok();
}

std::string input_name(const TextOptions& options, size_t count, size_t i) {
  return count == 1 ? options.field : options.field + "[" + std::to_string(i) + "]";
}

}  // namespace

Status frame_texts(const EmbeddingModel& model, const std::vector<std::string>& texts,
                   const TextOptions& options, std::vector<std::vector<int32_t>>* sequences,
                   int64_t* tokens, size_t* failed) {
  int limit = 0;
  TESSERA_RETURN_IF_ERROR(text_limit(model, options, &limit));
  sequences->assign(texts.size(), {});
  *tokens = 0;
  std::vector<model::TokenSpan> spans;
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string name = input_name(options, texts.size(), i);
    if (failed != nullptr) *failed = i;
    Status s = options.prompt.empty()
                   ? model.tokenize(texts[i], &spans, options.limit)
                   : model.tokenize(options.prompt + texts[i], &spans, options.limit);
    if (!s.ok() && options.limit != nullptr && options.limit->stopped()) return s;
    if (!s.ok()) {
      return invalid_argument(name + ": the tokenizer refused this text: " + s.message());
    }
    TESSERA_RETURN_IF_ERROR(frame_one(model, spans, limit, options, name, &(*sequences)[i]));
    *tokens += static_cast<int64_t>((*sequences)[i].size());
  }
  return Status::Ok();
}

Status frame_token_ids(const EmbeddingModel& model, const std::vector<std::vector<int32_t>>& ids,
                       const TextOptions& options, std::vector<std::vector<int32_t>>* sequences,
                       int64_t* tokens, size_t* failed) {
  int limit = 0;
  TESSERA_RETURN_IF_ERROR(text_limit(model, options, &limit));
  std::vector<model::TokenSpan> prompt;
  TESSERA_RETURN_IF_ERROR(prompt_tokens(model, options.prompt, &prompt));
  sequences->assign(ids.size(), {});
  *tokens = 0;
  std::vector<model::TokenSpan> spans;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (failed != nullptr) *failed = i;
    spans = prompt;
    for (int32_t id : ids[i]) spans.push_back({id, -1, -1});
    TESSERA_RETURN_IF_ERROR(frame_one(model, spans, limit, options,
                                      input_name(options, ids.size(), i), &(*sequences)[i]));
    *tokens += static_cast<int64_t>((*sequences)[i].size());
  }
  return Status::Ok();
}

Status run_in_batches(std::vector<std::vector<int32_t>> sequences,
                      const std::vector<std::vector<int32_t>>* type_ids, int64_t width,
                      int64_t batch_tokens, Context& ctx, const BatchRun& run,
                      const RowSink& sink) {
  std::vector<int64_t> lengths;
  lengths.reserve(sequences.size());
  for (const auto& seq : sequences) lengths.push_back(static_cast<int64_t>(seq.size()));
  const std::vector<Batch> batches = plan_batches(lengths, batch_tokens);
  size_t widest = 0;
  for (const Batch& b : batches) widest = std::max(widest, b.chunks.size());
  Buffer batch_out;
  TESSERA_RETURN_IF_ERROR(Buffer::allocate(ctx.allocator(), widest * width * sizeof(float),
                                           "pipeline.batch", &batch_out));
  std::vector<std::vector<int32_t>> batch_sequences;
  std::vector<std::vector<int32_t>> batch_types;
  for (const Batch& batch : batches) {
    batch_sequences.clear();
    batch_types.clear();
    for (int64_t i : batch.chunks) {
      batch_sequences.push_back(std::move(sequences[i]));
      if (type_ids != nullptr) batch_types.push_back((*type_ids)[i]);
    }
    TESSERA_RETURN_IF_ERROR(
        run(batch_sequences, type_ids != nullptr ? &batch_types : nullptr, batch_out.as<float>()));
    for (size_t s = 0; s < batch.chunks.size(); ++s) {
      sink(batch.chunks[s], batch_out.as<float>() + s * width);
    }
  }
  return Status::Ok();
}

Status embed_texts(EmbeddingModel& model, const std::vector<std::string>& texts,
                   const TextOptions& options, Context& ctx, float* out) {
  if (texts.empty()) return Status::Ok();
  std::vector<std::vector<int32_t>> sequences;
  int64_t tokens = 0;
  TESSERA_RETURN_IF_ERROR(frame_texts(model, texts, options, &sequences, &tokens));
  const int64_t dim = model.dim();
  const BatchRun run = [&](const std::vector<std::vector<int32_t>>& batch,
                           const std::vector<std::vector<int32_t>>*,
                           float* rows) { return model.embed(batch, ctx, rows); };
  return run_in_batches(
      std::move(sequences), nullptr, dim, options.batch_tokens, ctx, run,
      [&](int64_t i, const float* row) { std::memcpy(out + i * dim, row, dim * sizeof(float)); });
}

}  // namespace tessera::pipeline
