// The seam between the pipeline and a model: tokenize text, embed token id
// sequences, or run the model's head (cross-encoder scores, SPLADE vectors).
// EncoderModel (encoder_model.h) adapts model::Encoder; tests use small
// fakes. The head methods have defaults for an embedding model, so a fake
// of one overrides nothing more.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/config.h"
#include "model/tokenizer.h"
#include "tessera/context.h"
#include "tessera/status.h"

namespace tessera::pipeline {

class EmbeddingModel {
 public:
  virtual ~EmbeddingModel() = default;
  virtual int dim() const = 0;  // a pooled embedding's width
  // A token state's width (embed_tokens): the encoder's hidden size, which
  // Dense modules after pooling make differ from dim().
  virtual int token_dim() const { return dim(); }
  virtual int max_seq_length() const = 0;  // tokens, the specials included
  virtual bool normalized() const = 0;     // are embeddings L2-normalized?
  // The specials the tokenizer's single template puts around a text ([CLS]
  // / [SEP]; none / <|endoftext|>; none / none): how every text and window
  // is framed (frame_window).
  virtual const model::SequenceFrame& frame() const = 0;
  // config_sentence_transformers.json's prompts (pipeline/prompts.h); a
  // model without any has an empty table.
  virtual const model::Prompts& prompts() const;
  // Document tokens without specials, byte offsets into `text`. Called from
  // several threads at once. `limit` (may be null) bounds the work
  // (model/tokenizers/work_limit.h); its refusal is returned as it is.
  virtual Status tokenize(std::string_view text, std::vector<model::TokenSpan>* out,
                          model::WorkLimit* limit = nullptr) const = 0;
  // Token ids back to text (TEI's /decode); an id the tokenizer does not
  // know fails, *bad_position its index in `ids`. Called from several
  // threads at once.
  virtual Status decode(const std::vector<int64_t>& ids, bool skip_special_tokens, std::string* out,
                        size_t* bad_position) const = 0;
  // sequences: framed by frame(), each <= max_seq_length(); writes
  // sequences.size() x dim() floats to out, row i for sequence i.
  virtual Status embed(const std::vector<std::vector<int32_t>>& sequences, Context& ctx,
                       float* out) = 0;
  // The same sequences unpooled: the final hidden state of every token,
  // the specials included, never normalized; writes (sum of lengths) x
  // token_dim() floats, sequence 0's tokens first (TEI's /embed_all).
  virtual Status embed_tokens(const std::vector<std::vector<int32_t>>& sequences, Context& ctx,
                              float* out) = 0;

  // The head: kNone (embedding), kSequenceClassification (labels() names
  // its outputs) or kMaskedLm (SPLADE, sparse_dim() values per text).
  virtual model::HeadKind head() const { return model::HeadKind::kNone; }
  virtual const std::vector<std::string>& labels() const;
  virtual int sparse_dim() const { return 0; }
  // A cross-encoder's input: [CLS] a [SEP] b [SEP] (the tokenizer's pair
  // template) with its type ids, cut to max_length tokens as HF's
  // longest_first truncation does. Called from several threads at once.
  virtual Status encode_pair(std::string_view a, std::string_view b, size_t max_length,
                             std::vector<int32_t>* ids, std::vector<int32_t>* type_ids,
                             model::WorkLimit* limit = nullptr) const;
  // Raw logits: sequences.size() x labels().size() floats; type_ids the
  // sequences' shape (nullptr: all zeros).
  virtual Status classify(const std::vector<std::vector<int32_t>>& sequences,
                          const std::vector<std::vector<int32_t>>* type_ids, Context& ctx,
                          float* out);
  // SPLADE rows: sequences.size() x sparse_dim() floats, mostly zero.
  virtual Status embed_sparse(const std::vector<std::vector<int32_t>>& sequences, Context& ctx,
                              float* out);

  int num_labels() const { return static_cast<int>(labels().size()); }
};

}  // namespace tessera::pipeline
