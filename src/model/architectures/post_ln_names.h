// The tensor layout of HF's BERT modules (BertEmbeddings, BertLayer), which
// the RoBERTa family reuses name for name. Architecture folders that share
// it start from here and change what differs.
#pragma once

#include "model/architectures/architecture.h"

namespace tessera::model {

inline WeightNames bert_module_names() {
  WeightNames n;
  n.word_embeddings = "embeddings.word_embeddings.weight";
  n.position_embeddings = "embeddings.position_embeddings.weight";
  n.token_type_embeddings = "embeddings.token_type_embeddings.weight";
  n.embeddings_norm = "embeddings.LayerNorm";
  n.layer = "encoder.layer.{}.";
  n.query = "attention.self.query";
  n.key = "attention.self.key";
  n.value = "attention.self.value";
  n.attention_out = "attention.output.dense";
  n.attention_norm = "attention.output.LayerNorm";
  n.ffn_in = "intermediate.dense";
  n.ffn_out = "output.dense";
  n.ffn_norm = "output.LayerNorm";
  return n;
}

}  // namespace tessera::model
