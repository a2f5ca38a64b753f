// Model configuration read from a Hugging Face / sentence-transformers model
// directory: config.json (read by the architecture that claims its
// model_type: architectures/), modules.json, 1_Pooling/config.json, the
// Normalize module and sentence_bert_config.json.
#pragma once

#include <string>
#include <vector>

#include "tessera/status.h"

namespace tessera::model {

class Architecture;  // architectures/architecture.h

// What sits on top of the encoder, from config.json's "architectures"
// (BertModel, XLMRobertaForSequenceClassification, BertForMaskedLM, ...).
enum class HeadKind {
  kNone,                    // *Model: embeddings by pooling the last hidden state
  kSequenceClassification,  // cross-encoders (rerank, /predict): [CLS] -> dense -> tanh -> labels
  kMaskedLm,                // SPLADE: vocabulary logits -> log(1 + relu) -> max over tokens
};
const char* head_kind_name(HeadKind k);

// The fields of config.json a post-LayerNorm encoder (BERT, RoBERTa,
// XLM-RoBERTa, MPNet) needs. Filled by load_network_config: the common
// fields here, then the architecture's own (Architecture::read_config).
struct NetworkConfig {
  const Architecture* architecture = nullptr;
  std::string model_type;                // "bert", "xlm-roberta", ...
  std::vector<std::string> class_names;  // config.json "architectures"
  int vocab_size = 0;
  int hidden_size = 0;
  int num_attention_heads = 0;
  int num_hidden_layers = 0;
  int intermediate_size = 0;
  int max_position_embeddings = 0;
  int type_vocab_size = 0;  // rows of token_type_embeddings; 0: the model has none
  int position_offset = 0;  // position of token 0 (RoBERTa, MPNet: padding_idx + 1)
  // MPNet's shared relative-position bias: the table's rows (0: no bias),
  // and the buckets and largest distance its scheme uses (HF's MPNet fixes
  // 32 and 128 whatever the config says; the config sizes only the table).
  int relative_attention_num_buckets = 0;
  int relative_buckets_used = 32;
  int relative_max_distance = 128;
  float layer_norm_eps = 1e-12f;
  std::string hidden_act;  // "gelu": exact erf form
  HeadKind head = HeadKind::kNone;
  int num_labels = 0;                 // kSequenceClassification
  std::vector<std::string> id2label;  // num_labels names ("LABEL_0" ... when absent)

  int head_dim() const { return hidden_size / num_attention_heads; }
  // Longest sequence the position table holds, specials included.
  int max_tokens() const { return max_position_embeddings - position_offset; }
};

enum class Pooling { kCls, kMean, kMax };
const char* pooling_name(Pooling p);

struct ModelConfig {
  NetworkConfig network;
  Pooling pooling = Pooling::kMean;
  bool normalize = false;
  bool sparse = false;          // SPLADE pooling (sentence-transformers SparseEncoder or kMaskedLm)
  int max_seq_length = 0;       // tokens, specials included
  std::string transformer_dir;  // holds config.json, the weights and the tokenizer
  std::string weights_path;     // transformer_dir + "/model.safetensors"
};

// Reads and checks one HF config.json. An unsupported model_type names the
// supported architectures; unsupported activations or position schemes name
// what is supported.
Status load_network_config(const std::string& path, NetworkConfig* out);

// Reads a whole model directory. Without modules.json the directory is a plain
// HF model: mean pooling (cls for sequence classifiers), no normalization,
// max_seq_length from the positions.
Status load_model_config(const std::string& model_dir, ModelConfig* out);

}  // namespace tessera::model
