#include "pipeline/text_scoring.h"

#include <cstring>
#include <limits>

#include "pipeline/model_kind.h"

namespace tessera::pipeline {

namespace {
constexpr size_t kPairSpecials = 3;  // [CLS] a [SEP] b [SEP]
}  // namespace

Status frame_score_inputs(const EmbeddingModel& model, const std::vector<ScoreInput>& inputs,
                          const TextOptions& options, std::vector<std::vector<int32_t>>* sequences,
                          std::vector<std::vector<int32_t>>* type_ids, int64_t* tokens,
                          size_t* failed) {
  const int limit = options.max_tokens > 0 ? options.max_tokens : model.max_seq_length();
  if (limit > model.max_seq_length() || limit < static_cast<int>(kPairSpecials)) {
    return invalid_argument("max_tokens = " + std::to_string(limit) + ": must be in [3, " +
                            std::to_string(model.max_seq_length()) + "] (the model's limit)");
  }
  sequences->assign(inputs.size(), {});
  type_ids->assign(inputs.size(), {});
  *tokens = 0;
  // Single texts go through frame_texts one by one, so that the messages
  // name the input's index in `inputs`.
  TextOptions one = options;
  std::vector<std::vector<int32_t>> framed;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string name =
        inputs.size() == 1 ? options.field : options.field + "[" + std::to_string(i) + "]";
    if (failed != nullptr) *failed = i;
    int64_t n = 0;
    if (!inputs[i].pair) {
      one.field = name;
      TESSERA_RETURN_IF_ERROR(frame_texts(model, {inputs[i].text}, one, &framed, &n));
      (*sequences)[i] = std::move(framed[0]);
      (*type_ids)[i].assign((*sequences)[i].size(), 0);
      *tokens += n;
      continue;
    }
    // Untruncated first: how long the pair is decides between a refusal and a cut.
    const size_t whole =
        options.truncate ? static_cast<size_t>(limit) : std::numeric_limits<size_t>::max();
    Status s = model.encode_pair(inputs[i].text, *inputs[i].pair, whole, &(*sequences)[i],
                                 &(*type_ids)[i], options.limit);
    if (!s.ok() && options.limit != nullptr && options.limit->stopped()) return s;
    if (!s.ok()) {
      return invalid_argument(name + ": the tokenizer refused this pair: " + s.message());
    }
    if ((*sequences)[i].size() > static_cast<size_t>(limit)) {
      return invalid_argument(name + " has " + std::to_string((*sequences)[i].size()) +
                              " tokens (the pair with its special tokens) but the model takes at "
                              "most " +
                              std::to_string(limit) + " (max_length); " + options.truncate_hint);
    }
    *tokens += static_cast<int64_t>((*sequences)[i].size());
  }
  return Status::Ok();
}

Status score_inputs(EmbeddingModel& model, const std::vector<ScoreInput>& inputs,
                    const TextOptions& options, Context& ctx, float* out) {
  TESSERA_RETURN_IF_ERROR(require_kind(model, ModelKind::kReranker, ModelKind::kClassifier,
                                       "scoring", "a sequence-classification model"));
  if (inputs.empty()) return Status::Ok();
  std::vector<std::vector<int32_t>> sequences, type_ids;
  int64_t tokens = 0;
  TESSERA_RETURN_IF_ERROR(
      frame_score_inputs(model, inputs, options, &sequences, &type_ids, &tokens));
  const int64_t labels = model.num_labels();
  const BatchRun run = [&](const std::vector<std::vector<int32_t>>& batch,
                           const std::vector<std::vector<int32_t>>* types,
                           float* rows) { return model.classify(batch, types, ctx, rows); };
  return run_in_batches(std::move(sequences), &type_ids, labels, options.batch_tokens, ctx, run,
                        [&](int64_t i, const float* row) {
                          std::memcpy(out + i * labels, row, labels * sizeof(float));
                        });
}

Status embed_sparse_texts(EmbeddingModel& model, const std::vector<std::string>& texts,
                          const TextOptions& options, Context& ctx, const RowSink& sink) {
  TESSERA_RETURN_IF_ERROR(
      require_kind(model, ModelKind::kSparse, "a sparse embedding", "a SPLADE (masked-LM) model"));
  if (texts.empty()) return Status::Ok();
  std::vector<std::vector<int32_t>> sequences;
  int64_t tokens = 0;
  TESSERA_RETURN_IF_ERROR(frame_texts(model, texts, options, &sequences, &tokens));
  const BatchRun run = [&](const std::vector<std::vector<int32_t>>& batch,
                           const std::vector<std::vector<int32_t>>*,
                           float* rows) { return model.embed_sparse(batch, ctx, rows); };
  return run_in_batches(std::move(sequences), nullptr, model.sparse_dim(), options.batch_tokens,
                        ctx, run, sink);
}

void sparsify(const float* row, int64_t n, std::vector<int32_t>* indices,
              std::vector<float>* values) {
  indices->clear();
  values->clear();
  for (int64_t i = 0; i < n; ++i) {
    if (row[i] != 0.0f) {
      indices->push_back(static_cast<int32_t>(i));
      values->push_back(row[i]);
    }
  }
}

}  // namespace tessera::pipeline
