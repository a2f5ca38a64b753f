// The seam between the pipeline and a model: tokenize text, embed token id
// sequences. EncoderModel (encoder_model.h) adapts model::Encoder; tests use
// small fakes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/tokenizer.h"
#include "tessera/context.h"
#include "tessera/status.h"

namespace tessera::pipeline {

class EmbeddingModel {
 public:
  virtual ~EmbeddingModel() = default;
  virtual int dim() const = 0;
  virtual int max_seq_length() const = 0;  // tokens, [CLS] and [SEP] included
  virtual bool normalized() const = 0;     // are embeddings L2-normalized?
  virtual int32_t cls_id() const = 0;
  virtual int32_t sep_id() const = 0;
  // Document tokens without specials, byte offsets into `text`. Called from
  // several threads at once.
  virtual Status tokenize(std::string_view text, std::vector<model::TokenSpan>* out) const = 0;
  // Token ids back to text (TEI's /decode); an id the tokenizer does not
  // know fails, *bad_position its index in `ids`. Called from several
  // threads at once.
  virtual Status decode(const std::vector<int64_t>& ids, bool skip_special_tokens, std::string* out,
                        size_t* bad_position) const = 0;
  // sequences: [CLS] ... [SEP], each <= max_seq_length(); writes
  // sequences.size() x dim() floats to out, row i for sequence i.
  virtual Status embed(const std::vector<std::vector<int32_t>>& sequences, Context& ctx,
                       float* out) = 0;
  // The same sequences unpooled: the final hidden state of every token,
  // [CLS] and [SEP] included, never normalized; writes (sum of lengths) x
  // dim() floats, sequence 0's tokens first (TEI's /embed_all).
  virtual Status embed_tokens(const std::vector<std::vector<int32_t>>& sequences, Context& ctx,
                              float* out) = 0;
};

}  // namespace tessera::pipeline
