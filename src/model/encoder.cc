#include "model/encoder.h"

#include <algorithm>
#include <cstring>

#include "model/architectures/architecture.h"
#include "model/heads/classifier.h"
#include "model/heads/pooling.h"
#include "model/heads/splade.h"
#include "model/kernels.h"
#include "model/layers/forward_pass.h"
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
    TESSERA_RETURN_IF_ERROR(load_network_weights(*file, e->config_.network, options.weights,
                                                 ctx.allocator(), &e->weights_));
  }  // the mapping is released here
  for (const DenseModule& d : e->config_.dense) {
    DenseWeights w;
    TESSERA_RETURN_IF_ERROR(load_dense_weights(d, ctx.allocator(), &w));
    e->dense_.push_back(std::move(w));
  }
  TESSERA_RETURN_IF_ERROR(
      Tokenizer::load(e->config_.transformer_dir, &e->tokenizer_, e->config_.network.vocab_size));
  // A token id past the embedding matrix would read out of bounds: refuse
  // the pair at load rather than check every id against two sizes.
  if (e->tokenizer_.vocab_size() > static_cast<size_t>(e->config_.network.vocab_size)) {
    return invalid_argument(
        e->config_.transformer_dir + ": the tokenizer has " +
        std::to_string(e->tokenizer_.vocab_size()) +
        " tokens but config.json vocab_size = " + std::to_string(e->config_.network.vocab_size));
  }
  *out = std::move(e);
  return Status::Ok();
}

size_t Encoder::weight_bytes() const {
  size_t total = weights_.bytes();
  for (const DenseWeights& d : dense_) {
    total += d.linear.bytes() + d.residual.bytes() + d.bias.bytes();
  }
  return total;
}

size_t Encoder::activation_bytes(int64_t tokens) const {
  const int64_t per_token = LayerScratch::floats_per_token(config_.network) + 1;  // + position
  return static_cast<size_t>(tokens * per_token) * sizeof(float);
}

Status Encoder::check_sequences(const std::vector<std::vector<int32_t>>& sequences,
                                const std::vector<std::vector<int32_t>>* type_ids) const {
  const int32_t vocab = config_.network.vocab_size;
  // Without token type embeddings every id must be 0 (RoBERTa has one row).
  const int32_t types = std::max(config_.network.type_vocab_size, 1);
  if (type_ids != nullptr && type_ids->size() != sequences.size()) {
    return invalid_argument("type_ids has " + std::to_string(type_ids->size()) + " sequences for " +
                            std::to_string(sequences.size()) + " inputs");
  }
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
    if (type_ids == nullptr) continue;
    const auto& tt = (*type_ids)[s];
    if (tt.size() != seq.size()) {
      return invalid_argument("sequence " + std::to_string(s) + " has " +
                              std::to_string(seq.size()) + " tokens but " +
                              std::to_string(tt.size()) + " type ids");
    }
    for (size_t i = 0; i < tt.size(); ++i) {
      if (tt[i] < 0 || tt[i] >= types) {
        return invalid_argument("sequence " + std::to_string(s) + ": type id " +
                                std::to_string(tt[i]) + " at position " + std::to_string(i) +
                                " is outside [0, " + std::to_string(types) + ")");
      }
    }
  }
  return Status::Ok();
}

Status Encoder::embed(const std::vector<std::vector<int32_t>>& sequences, Dispatcher& attention,
                      Context& ctx, float* out) {
  return encode(sequences, nullptr, attention, ctx, Output::kPooled, out);
}

Status Encoder::embed_tokens(const std::vector<std::vector<int32_t>>& sequences,
                             Dispatcher& attention, Context& ctx, float* out) {
  return encode(sequences, nullptr, attention, ctx, Output::kTokens, out);
}

Status Encoder::classify(const std::vector<std::vector<int32_t>>& sequences,
                         const std::vector<std::vector<int32_t>>* type_ids, Dispatcher& attention,
                         Context& ctx, float* out) {
  if (!weights_.classifier) {
    return unsupported(model_dir_ +
                       ": not a sequence-classification model (config.json "
                       "architectures name no *ForSequenceClassification)");
  }
  return encode(sequences, type_ids, attention, ctx, Output::kScores, out);
}

Status Encoder::embed_sparse(const std::vector<std::vector<int32_t>>& sequences,
                             Dispatcher& attention, Context& ctx, float* out) {
  if (!weights_.masked_lm) {
    return unsupported(model_dir_ +
                       ": not a SPLADE model (config.json architectures "
                       "name no *ForMaskedLM)");
  }
  return encode(sequences, nullptr, attention, ctx, Output::kSparse, out);
}

Status Encoder::encode(const std::vector<std::vector<int32_t>>& sequences,
                       const std::vector<std::vector<int32_t>>* type_ids, Dispatcher& attention,
                       Context& ctx, Output output, float* out) {
  TESSERA_RETURN_IF_ERROR(check_sequences(sequences, type_ids));
  if (sequences.empty()) return Status::Ok();
  const NetworkConfig& c = config_.network;
  const int64_t h = c.hidden_size;
  const int64_t count = static_cast<int64_t>(sequences.size());

  // Packed layout: sequence s owns token rows cu[s] .. cu[s+1].
  std::vector<int32_t> cu(count + 1, 0);
  int64_t longest = 0;
  for (int64_t s = 0; s < count; ++s) {
    cu[s + 1] = cu[s] + static_cast<int32_t>(sequences[s].size());
    longest = std::max<int64_t>(longest, static_cast<int64_t>(sequences[s].size()));
  }
  const int64_t tokens = cu[count];
  size_t gemm_bytes = 0;  // every layer has the shapes of layer 0
  if (!weights_.layers.empty()) {
    TESSERA_RETURN_IF_ERROR(
        layer_gemm_workspace(weights_.layers[0], c, tokens, ctx.pool().num_threads(), &gemm_bytes));
  }
  constexpr size_t kAlign = TrackingAllocator::kAlignment;
  const size_t activations = (activation_bytes(tokens) + kAlign - 1) / kAlign * kAlign;
  Buffer work;
  TESSERA_RETURN_IF_ERROR(
      Buffer::allocate(ctx.allocator(), activations + gemm_bytes, "model.activations", &work));
  const int64_t wide = LayerScratch::wide_width(c);
  const int64_t context = LayerScratch::context_width(c);
  LayerScratch scratch;
  scratch.hidden = work.as<float>();
  float* next = scratch.hidden + tokens * h;
  if (c.block == BlockKind::kPreNorm) {
    scratch.normed = next;
    next += tokens * h;
  }
  scratch.context = next;
  next += tokens * context;
  scratch.wide = next;
  next += tokens * wide;
  auto* positions = reinterpret_cast<int32_t*>(next);
  scratch.gemm_workspace = work.as<char>() + activations;
  scratch.gemm_workspace_bytes = gemm_bytes;
  for (int64_t s = 0; s < count; ++s) {
    for (int32_t t = cu[s]; t < cu[s + 1]; ++t) positions[t] = t - cu[s];
  }
  PackedBatch batch{tokens, count, cu.data(), positions, {}};

  // The architecture's own forward (its folder under architectures/) to the
  // last hidden state; pooling and heads below are every architecture's.
  const ForwardPass pass{c, weights_, sequences, type_ids, batch, scratch, longest, attention, ctx};
  TESSERA_RETURN_IF_ERROR(c.architecture->forward(pass));
  switch (output) {
    case Output::kTokens:
      // The packed hidden states are already token-major, sequence by sequence.
      std::memcpy(out, scratch.hidden, static_cast<size_t>(tokens * h) * sizeof(float));
      return Status::Ok();
    case Output::kScores: {
      StageSpan span(ctx.profiler(), "model.classifier");
      return run_classifier(*weights_.classifier, c, scratch.hidden, cu.data(), count, ctx, out);
    }
    case Output::kSparse: {
      StageSpan span(ctx.profiler(), "model.splade", "V=" + std::to_string(c.vocab_size));
      return run_splade(*weights_.masked_lm, c, scratch.hidden, cu.data(), count, ctx, out);
    }
    case Output::kPooled:
      break;
  }
  StageSpan span(
      ctx.profiler(), "model.pooling",
      std::string(pooling_name(config_.pooling)) + (config_.normalize ? "+normalize" : ""));
  if (dense_.empty()) {
    pool_sequences(config_.pooling, scratch.hidden, h, cu.data(), count, out);
  } else {
    // Pooled into the (free) wide scratch, then through the Dense modules.
    auto* pooled = static_cast<float*>(scratch.wide);
    pool_sequences(config_.pooling, scratch.hidden, h, cu.data(), count, pooled);
    StageSpan dense(ctx.profiler(), "model.dense",
                    std::to_string(config_.dense.size()) + " modules -> " + std::to_string(dim()));
    TESSERA_RETURN_IF_ERROR(run_dense(config_.dense, dense_, pooled, count, ctx, out));
  }
  if (config_.normalize) l2_normalize_rows(out, count, dim());
  return Status::Ok();
}

}  // namespace tessera::model
