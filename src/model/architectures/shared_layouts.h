// What several architecture folders share because HF's modeling code shares
// it: the tensor layout of BERT's modules (BertEmbeddings, BertLayer), which
// the RoBERTa family reuses name for name; the RoBERTa-style heads
// (RobertaClassificationHead, RobertaLMHead), which MPNet reuses; and the
// one position scheme those configs may name. Folders start from here and
// change what differs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "model/architectures/architecture.h"
#include "model/config_fields.h"
#include "runtime/json_input.h"

namespace tessera::model {

// config.json position_embedding_type: only "absolute" (the default) runs.
inline Status require_absolute_positions(const nlohmann::json& j, const std::string& path) {
  std::string positions = "absolute";
  TESSERA_RETURN_IF_ERROR(
      config_fields::get_string(j, path, "position_embedding_type", &positions));
  if (positions != "absolute") {
    return unsupported(path + ": position_embedding_type \"" + json_input::clip(positions) +
                       "\" is not supported; supported: \"absolute\"");
  }
  return Status::Ok();
}

// classifier.dense -> tanh -> classifier.out_proj; lm_head.{dense, layer_norm, decoder}.
inline void set_roberta_style_heads(WeightNames* n) {
  n->classifier_dense = "classifier.dense";
  n->classifier_out = "classifier.out_proj";
  n->mlm_transform = "lm_head.dense";
  n->mlm_norm = "lm_head.layer_norm";
  n->mlm_decoder = "lm_head.decoder.weight";
  n->mlm_bias = "lm_head.bias|lm_head.decoder.bias";
}

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
