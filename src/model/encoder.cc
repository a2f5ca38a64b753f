#include "model/encoder.h"

#include <cstring>

#include "model/bert_layer.h"
#include "model/kernels.h"
#include "model/pooling.h"
#include "model/safetensors.h"
#include "model/stage_span.h"

namespace tessera::model {

Status Encoder::load(const std::string& model_dir, const EncoderOptions& options, Context& ctx,
                     std::unique_ptr<Encoder>* out) {
  std::unique_ptr<Encoder> e(new Encoder());
  e->model_dir_ = model_dir;
  TESSERA_RETURN_IF_ERROR(load_model_config(model_dir, &e->config_));
  {
    std::unique_ptr<SafetensorsFile> file;
    TESSERA_RETURN_IF_ERROR(SafetensorsFile::open(e->config_.weights_path, &file));
    TESSERA_RETURN_IF_ERROR(
        load_bert_weights(*file, e->config_.bert, options.weights, ctx.allocator(), &e->weights_));
  }  // the mapping is released here
  TESSERA_RETURN_IF_ERROR(Tokenizer::load(e->config_.transformer_dir, &e->tokenizer_));
  if (e->tokenizer_.vocab_size() > static_cast<size_t>(e->config_.bert.vocab_size)) {
    return invalid_argument(e->config_.transformer_dir + ": the tokenizer has " +
                            std::to_string(e->tokenizer_.vocab_size()) +
                            " tokens but config.json vocab_size = " +
                            std::to_string(e->config_.bert.vocab_size));
  }
  *out = std::move(e);
  return Status::Ok();
}

size_t Encoder::activation_bytes(int64_t tokens) const {
  const int64_t per_token =
      int64_t{2} * config_.bert.hidden_size + LayerScratch::wide_width(config_.bert);
  return static_cast<size_t>(tokens * per_token) * sizeof(float);
}

Status Encoder::check_sequences(const std::vector<std::vector<int32_t>>& sequences) const {
  const int32_t vocab = config_.bert.vocab_size;
  for (size_t s = 0; s < sequences.size(); ++s) {
    const auto& seq = sequences[s];
    if (seq.empty() || seq.size() > static_cast<size_t>(config_.max_seq_length)) {
      return invalid_argument("sequence " + std::to_string(s) + " has " +
                              std::to_string(seq.size()) + " tokens; must be 1.." +
                              std::to_string(config_.max_seq_length) + " (max_seq_length)");
    }
    for (size_t i = 0; i < seq.size(); ++i) {
      if (seq[i] < 0 || seq[i] >= vocab) {
        return invalid_argument("sequence " + std::to_string(s) + ": token id " +
                                std::to_string(seq[i]) + " at position " + std::to_string(i) +
                                " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
      }
    }
  }
  return Status::Ok();
}

Status Encoder::embed(const std::vector<std::vector<int32_t>>& sequences, Dispatcher& attention,
                      Context& ctx, float* out) {
  return encode(sequences, attention, ctx, Output::kPooled, out);
}

Status Encoder::embed_tokens(const std::vector<std::vector<int32_t>>& sequences,
                             Dispatcher& attention, Context& ctx, float* out) {
  return encode(sequences, attention, ctx, Output::kTokens, out);
}

Status Encoder::encode(const std::vector<std::vector<int32_t>>& sequences, Dispatcher& attention,
                       Context& ctx, Output output, float* out) {
  TESSERA_RETURN_IF_ERROR(check_sequences(sequences));
  if (sequences.empty()) return Status::Ok();
  const BertConfig& c = config_.bert;
  const int64_t h = c.hidden_size;
  const int64_t count = static_cast<int64_t>(sequences.size());

  // Packed layout: sequence s owns token rows cu[s] .. cu[s+1].
  std::vector<int32_t> cu(count + 1, 0);
  for (int64_t s = 0; s < count; ++s) {
    cu[s + 1] = cu[s] + static_cast<int32_t>(sequences[s].size());
  }
  const int64_t tokens = cu[count];
  size_t gemm_bytes = 0;  // every layer has the shapes of layer 0
  if (!weights_.layers.empty()) {
    TESSERA_RETURN_IF_ERROR(bert_layer_gemm_workspace(weights_.layers[0], tokens,
                                                      ctx.pool().num_threads(), &gemm_bytes));
  }
  constexpr size_t kAlign = TrackingAllocator::kAlignment;
  const size_t activations = (activation_bytes(tokens) + kAlign - 1) / kAlign * kAlign;
  Buffer work;
  TESSERA_RETURN_IF_ERROR(
      Buffer::allocate(ctx.allocator(), activations + gemm_bytes, "model.activations", &work));
  LayerScratch scratch;
  scratch.hidden = work.as<float>();
  scratch.context = scratch.hidden + tokens * h;
  scratch.wide = scratch.context + tokens * h;
  scratch.gemm_workspace = work.as<char>() + activations;
  scratch.gemm_workspace_bytes = gemm_bytes;
  const PackedBatch batch{tokens, count, cu.data()};

  {
    // hidden[t] = LN(word[id] + position[p] + token_type[0]); single-segment input.
    StageSpan span(ctx.profiler(), "model.embeddings", "T=" + std::to_string(tokens));
    const BertWeights& w = weights_;
    for_row_blocks(ctx.pool(), count, 4 * h * max_seq_length(), [&](int64_t s0, int64_t s1) {
      for (int64_t s = s0; s < s1; ++s) {
        for (int64_t p = 0; p < static_cast<int64_t>(sequences[s].size()); ++p) {
          float* row = scratch.hidden + (cu[s] + p) * h;
          sum3_row(row, w.word_embeddings + sequences[s][p] * h, w.position_embeddings + p * h,
                   w.token_type_embeddings, h);
          layer_norm_row(row, w.embeddings_ln_gamma, w.embeddings_ln_beta, c.layer_norm_eps, h);
        }
      }
    });
  }
  for (int l = 0; l < c.num_hidden_layers; ++l) {
    TESSERA_RETURN_IF_ERROR(
        run_bert_layer(l, weights_.layers[l], c, batch, scratch, attention, ctx));
  }
  if (output == Output::kTokens) {
    // The packed hidden states are already token-major, sequence by sequence.
    std::memcpy(out, scratch.hidden, static_cast<size_t>(tokens * h) * sizeof(float));
    return Status::Ok();
  }
  {
    StageSpan span(ctx.profiler(), "model.pooling",
                   std::string(pooling_name(config_.pooling)) +
                       (config_.normalize ? "+normalize" : ""));
    pool_sequences(config_.pooling, scratch.hidden, h, cu.data(), count, out);
    if (config_.normalize) l2_normalize_rows(out, count, h);
  }
  return Status::Ok();
}

}  // namespace tessera::model
