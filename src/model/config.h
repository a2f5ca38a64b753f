// Model configuration read from a Hugging Face / sentence-transformers model
// directory: config.json (read by the architecture that claims its
// model_type: architectures/), modules.json, 1_Pooling/config.json, the
// Normalize module and sentence_bert_config.json.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tessera/attention.h"
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

// Where a layer's norms sit (layers/): after each residual add (BERT,
// RoBERTa, MPNet, NomicBERT) or before each sub-block, with a final norm
// after the last layer (ModernBERT, Qwen3).
enum class BlockKind { kPostNorm, kPreNorm };
enum class NormKind { kLayerNorm, kRmsNorm };
// The FFN's activation: GELU (exact erf), GELU (tanh form), SiLU.
enum class Activation { kGelu, kGeluTanh, kSilu };
const char* block_kind_name(BlockKind k);
const char* activation_name(Activation a);

// Rotary position embedding (HF rotate_half form: dimension i pairs with
// i + dim/2), applied to Q and K of every layer; its base is per layer.
struct Rotary {
  int dim = 0;  // rotated dimensions of each head (the first ones); 0: no rotary
};

// What one layer's attention sees: its mask (none, causal, a sliding window)
// and its rotary parameters.
struct LayerAttention {
  Mask mask;
  float rope_theta = 10000.0f;
  float rope_linear_factor = 1.0f;  // rope_type "linear": positions divided by it
};

// The fields of config.json the encoders need (post-LayerNorm BERT,
// RoBERTa, XLM-RoBERTa, MPNet, NomicBERT; pre-norm ModernBERT and Qwen3).
// Filled by load_network_config: the common fields here, then the
// architecture's own (Architecture::read_config).
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
  float layer_norm_eps = 1e-12f;                // of every norm, RMSNorm too
  std::string hidden_act;                       // as config.json names it
  std::string hidden_act_field = "hidden_act";  // the field it came from (errors name it)
  Activation activation = Activation::kGelu;
  // The block's shape. BERT's defaults; an architecture changes what differs.
  BlockKind block = BlockKind::kPostNorm;
  NormKind norm = NormKind::kLayerNorm;
  bool norm_bias = true;           // LayerNorms have a beta
  bool gated_mlp = false;          // FFN = act(x Wg) * (x Wu): SwiGLU, GeGLU
  bool attention_bias = true;      // Q, K, V and the attention output have biases
  bool attention_out_bias = true;  // with attention_bias: the output's too (Qwen2: Q, K, V only)
  bool mlp_bias = true;            // the FFN's Linear layers have biases
  bool mlp_in_bias = true;         // with mlp_bias: the first product's too (GTE: only the last's)
  bool absolute_positions = true;  // a position embedding table (else rotary or none)
  bool embedding_norm = true;      // a norm after the embeddings
  bool first_layer_norm = true;    // pre-norm: layer 0 normalizes its input (ModernBERT: no)
  bool qk_norm = false;            // RMSNorm over each head of Q and K (Qwen3)
  bool final_norm = false;         // a norm after the last layer (pre-norm blocks)
  int num_key_value_heads = 0;     // grouped-query attention; 0: num_attention_heads
  int explicit_head_dim = 0;       // config.json head_dim; 0: hidden_size / heads
  Rotary rotary;
  // Per layer (num_hidden_layers entries) once read; empty: every layer
  // attends to the whole sequence.
  std::vector<LayerAttention> layer_attention;
  std::string checkpoint_layout;  // an architecture's name for a tensor-name variant ("" default)
  HeadKind head = HeadKind::kNone;
  // The sequence-classification head's shape: BERT's / RoBERTa's pooler is
  // dense + tanh on the first token; ModernBERT's pools (cls or mean), then
  // dense (bias optional) + GELU + LayerNorm.
  struct ClassifierShape {
    bool mean_pooling = false;  // else the first token
    bool gelu = false;          // else tanh
    bool dense_bias = true;
    bool norm = false;  // a LayerNorm after the activation (eps layer_norm_eps, beta: norm_bias)
  } classifier;
  int num_labels = 0;                 // kSequenceClassification
  std::vector<std::string> id2label;  // num_labels names ("LABEL_0" ... when absent)

  int head_dim() const {
    return explicit_head_dim > 0 ? explicit_head_dim : hidden_size / num_attention_heads;
  }
  int kv_heads() const {
    return num_key_value_heads > 0 ? num_key_value_heads : num_attention_heads;
  }
  // Widths of the attention's products: Q, K and V side by side, and the
  // attention output (before Wo).
  int qkv_width() const { return (num_attention_heads + 2 * kv_heads()) * head_dim(); }
  int attention_width() const { return num_attention_heads * head_dim(); }
  // Rows of the FFN's first product: two halves when gated.
  int ffn_in_rows() const { return gated_mlp ? 2 * intermediate_size : intermediate_size; }
  LayerAttention attention_of(int layer) const {
    return layer_attention.empty() ? LayerAttention{} : layer_attention[layer];
  }
  // Longest sequence the position table holds, specials included.
  int max_tokens() const { return max_position_embeddings - position_offset; }
};

// sentence-transformers' Pooling modes. kMeanSqrtLen: the sum over sqrt(n);
// kWeightedMean: token i weighted i + 1 (position in its sequence).
enum class Pooling { kCls, kMean, kMax, kLastToken, kMeanSqrtLen, kWeightedMean };
const char* pooling_name(Pooling p);

// config_sentence_transformers.json's prompts: texts prepended to an input
// before tokenization (sentence-transformers' encode(prompt_name=...)).
// "query" and "document" always exist (empty unless the model sets them),
// as in sentence-transformers 6.3.
struct Prompts {
  std::map<std::string, std::string> by_name;
  std::string default_name;  // "": none (default_prompt_name null or absent)
  // 1_Pooling's include_prompt: false (INSTRUCTOR-style) pools without the
  // prompt's tokens, which tessera does not do; a prompt is refused then.
  bool pooled = true;
};

// sentence-transformers' Dense module after pooling (LaBSE,
// distiluse-base-multilingual, EmbeddingGemma): y = act(x W^T + b), plus x
// (or x R^T when in != out) with use_residual. Weights in its folder's
// model.safetensors: linear.weight [out, in], linear.bias [out],
// residual.weight [out, in].
enum class DenseActivation { kIdentity, kTanh, kGelu, kRelu, kSigmoid, kSilu };
const char* dense_activation_name(DenseActivation a);  // "Tanh", as torch.nn names it
struct DenseModule {
  std::string dir;  // its folder (modules.json "path")
  int in_features = 0;
  int out_features = 0;
  bool bias = true;
  bool residual = false;
  DenseActivation activation = DenseActivation::kTanh;  // sentence-transformers' default
};

struct ModelConfig {
  NetworkConfig network;
  Pooling pooling = Pooling::kMean;
  std::vector<DenseModule> dense;  // after pooling, in modules.json order
  Prompts prompts;
  bool normalize = false;
  // tokenizer_config.json's model_input_names lists token_type_ids (or does
  // not say): HF's tokenizer passes a pair's segment ids only then, and the
  // model sees zeros otherwise.
  bool token_type_ids = true;
  bool sparse = false;          // SPLADE pooling (sentence-transformers SparseEncoder or kMaskedLm)
  int max_seq_length = 0;       // tokens, specials included
  std::string transformer_dir;  // holds config.json, the weights and the tokenizer
  std::string weights_path;     // transformer_dir + "/model.safetensors"
  // Width of a pooled embedding: the last Dense module's out_features, else
  // hidden_size.
  int embedding_dim() const {
    return dense.empty() ? network.hidden_size : dense.back().out_features;
  }
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
