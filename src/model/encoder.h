// Encoder: a post-LayerNorm transformer encoder (BERT, RoBERTa, XLM-RoBERTa,
// MPNet: architectures/) with its head, ready to embed, score or sparsely
// embed token id sequences. Weights are in tracked memory ("model.weights"; the Linear layers
// f32, bf16 or int8, EncoderOptions::weights, the rest f32); each embed()
// call takes its working memory from the context ("model.activations") and
// frees it before returning.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/heads/dense.h"
#include "model/tokenizer.h"
#include "model/weight_precision.h"
#include "model/weights.h"
#include "tessera/context.h"
#include "tessera/dispatcher.h"

namespace tessera::model {

struct EncoderOptions {
  WeightPrecision weights = WeightPrecision::kF32;  // of the Linear layers
};

class Encoder {
 public:
  // Reads the configs, the tokenizer and model.safetensors from `model_dir`
  // (a sentence-transformers or plain HF directory of a supported architecture). The safetensors
  // mapping is released before returning: only the converted weights stay.
  static Status load(const std::string& model_dir, const EncoderOptions& options, Context& ctx,
                     std::unique_ptr<Encoder>* out);

  // sequences: token ids, each already [CLS] ... [SEP], 1 <= length <=
  // max_seq_length(). Runs them as one packed batch (the caller bounds its
  // size) and writes sequences.size() x dim() floats to out: row i pooled for
  // sequence i, through the model's Dense modules, L2-normalized when the
  // model has a Normalize module. Bad
  // input writes nothing. The encoder keeps no per-call state, but calls that
  // share a Context must not overlap (its thread pool is not reentrant).
  Status embed(const std::vector<std::vector<int32_t>>& sequences, Dispatcher& attention,
               Context& ctx, float* out);
  // The same run without pooling: writes the final hidden state of every
  // token, [CLS] and [SEP] included, (sum of lengths) x hidden_size() floats, the
  // tokens of sequence 0 first. Never normalized (TEI's /embed_all).
  Status embed_tokens(const std::vector<std::vector<int32_t>>& sequences, Dispatcher& attention,
                      Context& ctx, float* out);

  // Cross-encoder scores: count x num_labels() raw logits (no activation).
  // sequences as Tokenizer::encode_pair makes them; type_ids the same shape
  // (BERT's segment ids), or nullptr for all zeros. Needs a
  // sequence-classification head (head() == kSequenceClassification).
  Status classify(const std::vector<std::vector<int32_t>>& sequences,
                  const std::vector<std::vector<int32_t>>* type_ids, Dispatcher& attention,
                  Context& ctx, float* out);
  // SPLADE vectors: count x vocab_size() floats, mostly zero (heads/splade.h).
  // Needs a masked-LM head (head() == kMaskedLm).
  Status embed_sparse(const std::vector<std::vector<int32_t>>& sequences, Dispatcher& attention,
                      Context& ctx, float* out);

  // A pooled embedding's width (the last Dense module's out_features, else
  // hidden_size()); a token state's.
  int dim() const { return config_.embedding_dim(); }
  int hidden_size() const { return config_.network.hidden_size; }
  HeadKind head() const { return config_.network.head; }
  int num_labels() const { return config_.network.num_labels; }
  int vocab_size() const { return config_.network.vocab_size; }
  int max_seq_length() const { return config_.max_seq_length; }
  const Tokenizer& tokenizer() const { return tokenizer_; }
  const std::string& model_dir() const { return model_dir_; }
  const ModelConfig& config() const { return config_; }
  size_t weight_bytes() const;
  WeightPrecision weight_precision() const { return weights_.precision; }
  // The element type attention runs in: bf16 with bf16 weights (the layer's
  // activations stay bf16 between its products; model/layers/encoder_layer.h), else f32.
  DType attention_dtype() const {
    return weights_.precision == WeightPrecision::kBf16 ? DType::kBF16 : DType::kF32;
  }
  // Working memory embed() takes for a batch of `tokens` tokens, besides the
  // bf16 GEMM workspace (bf16 weights only; up to 2 bytes per token x
  // intermediate_size).
  size_t activation_bytes(int64_t tokens) const;

 private:
  Encoder() = default;
  Status check_sequences(const std::vector<std::vector<int32_t>>& sequences,
                         const std::vector<std::vector<int32_t>>* type_ids) const;
  enum class Output { kPooled, kTokens, kScores, kSparse };
  Status encode(const std::vector<std::vector<int32_t>>& sequences,
                const std::vector<std::vector<int32_t>>* type_ids, Dispatcher& attention,
                Context& ctx, Output output, float* out);

  std::string model_dir_;
  ModelConfig config_;
  NetworkWeights weights_;
  std::vector<DenseWeights> dense_;  // config_.dense's
  Tokenizer tokenizer_;
};

}  // namespace tessera::model
