// Model configuration read from a Hugging Face / sentence-transformers model
// directory: config.json (the BERT encoder), modules.json, 1_Pooling/config.json,
// the Normalize module and sentence_bert_config.json.
#pragma once

#include <string>

#include "tessera/status.h"

namespace tessera::model {

// The fields of HF config.json that a BERT-family encoder needs.
struct BertConfig {
  std::string model_type;  // "bert"
  int vocab_size = 0;
  int hidden_size = 0;
  int num_attention_heads = 0;
  int num_hidden_layers = 0;
  int intermediate_size = 0;
  int max_position_embeddings = 0;
  int type_vocab_size = 0;
  float layer_norm_eps = 1e-12f;
  std::string hidden_act;  // "gelu": exact erf form

  int head_dim() const { return hidden_size / num_attention_heads; }
};

enum class Pooling { kCls, kMean, kMax };
const char* pooling_name(Pooling p);

struct ModelConfig {
  BertConfig bert;
  Pooling pooling = Pooling::kMean;
  bool normalize = false;
  int max_seq_length = 0;      // tokens, [CLS] and [SEP] included
  std::string transformer_dir;  // holds config.json, the weights and the tokenizer
  std::string weights_path;     // transformer_dir + "/model.safetensors"
};

// Reads and checks one HF config.json. Unsupported model types, activations or
// position embeddings get an error listing what is supported.
Status load_bert_config(const std::string& path, BertConfig* out);

// Reads a whole model directory. Without modules.json the directory is a plain
// HF model: mean pooling, no normalization, max_seq_length from the positions.
Status load_model_config(const std::string& model_dir, ModelConfig* out);

}  // namespace tessera::model
