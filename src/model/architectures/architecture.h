// The model seam: one folder per architecture under src/model/architectures/
// (bert/, mpnet/, roberta/ ...), found by the build, not listed (see
// CMakeLists.txt here). An architecture says which config.json model_types
// it accepts, reads its own config fields, names its checkpoint's tensors
// and runs its forward pass, composed from the shared parts of layers/
// (forward_pass.h: embeddings, the post-norm and pre-norm layer kinds,
// rotary tables, the relative position bias, the final norm); attention
// runs only through the dispatcher. The encoder keeps what every
// architecture shares: checking and packing the input, working memory,
// pooling and heads. A folder names no other architecture; deleting one
// still builds (its model_type is then refused with the supported list).
// docs/CONTRIBUTING.md, "Adding an architecture".
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "model/config.h"
#include "model/layers/forward_pass.h"
#include "tessera/status.h"

namespace tessera::model {

// The names of one checkpoint layout's tensors. Encoder names are relative to
// the prefix the file uses (whatever precedes `word_embeddings`: "",
// "bert.", "roberta.", "mpnet.", "model."); "{}" in `layer` is the layer
// index. A Linear or norm "x" means the tensors "x.weight" and "x.bias"
// (without ".bias" where the config says the model has none:
// NetworkConfig's attention_bias, mlp_bias, norm_bias).
struct WeightNames {
  std::string word_embeddings;        // a full tensor name ("embeddings.word_embeddings.weight")
  std::string position_embeddings;    // a full tensor name; unused without absolute positions
  std::string token_type_embeddings;  // a full tensor name; "" when the model has none
  std::string embeddings_norm;        // unused without an embedding norm
  std::string final_norm;             // after the last layer (NetworkConfig::final_norm)
  std::string layer;                  // "encoder.layer.{}."
  // Relative to `layer`: the Linear layers and norms of one layer.
  // `qkv` names one fused [Q; K; V] Linear (ModernBERT's Wqkv) in place of
  // query, key and value. A gated FFN's first product is [gate; up]: either
  // `ffn_gate` (activated) and `ffn_in` (up), or `ffn_in` alone holding both
  // halves, gate first (ModernBERT's Wi). attention_norm and ffn_norm are the
  // norms after (post-norm) or before (pre-norm) each part.
  std::string query, key, value, qkv, attention_out, attention_norm, ffn_gate, ffn_in, ffn_out,
      ffn_norm;
  // `ffn_in` alone holds [up; gate], the second half activated (GTE's
  // up_gate_proj), rather than gate first.
  bool ffn_in_up_first = false;
  std::string q_norm, k_norm;  // per-head RMSNorm weights [head_dim] (NetworkConfig::qk_norm)
  std::string relative_attention_bias;  // a full tensor name [buckets, heads]; "" when none
  // Heads, looked up under the prefix first, then as given (HF keeps
  // "classifier" and "cls." outside the base model's prefix).
  std::string classifier_dense;  // Linear H -> H, then tanh (or GELU: NetworkConfig::classifier)
  std::string classifier_norm;   // LayerNorm after it; "" when the head has none
  std::string classifier_out;    // Linear H -> num_labels
  std::string mlm_transform;     // Linear H -> H, then hidden_act
  std::string mlm_norm;          // LayerNorm
  std::string mlm_decoder;       // a full tensor name [V, H]; absent: tied to word_embeddings
  std::string mlm_bias;          // a full tensor name [V]
};

class Architecture {
 public:
  virtual ~Architecture() = default;
  // The folder's name: "bert".
  virtual const char* name() const = 0;
  // The config.json model_type values this architecture runs.
  virtual std::vector<std::string> model_types() const = 0;
  // Reads the fields only this architecture has (position offset, token
  // types, relative buckets ...) into `c`, whose common fields are already
  // read; refuses a config it cannot run, naming the field and what is
  // supported. `path` starts every message.
  virtual Status read_config(const nlohmann::json& j, const std::string& path,
                             NetworkConfig* c) const = 0;
  virtual WeightNames weight_names(const NetworkConfig& c) const = 0;
  // The forward pass to the last hidden state (f.scratch.hidden, [tokens,
  // hidden_size]): embeddings, every layer, any final norm.
  virtual Status forward(const ForwardPass& f) const = 0;
  // Whether head `h` (heads/: kSequenceClassification, kMaskedLm) runs on
  // this architecture; where not, such a checkpoint is refused at load.
  virtual bool runs_head(HeadKind /*h*/) const { return true; }
};

// Every architecture this build has, in folder-name order (generated from
// the folders: architectures/CMakeLists.txt).
const std::vector<const Architecture*>& architectures();
// The architecture that accepts `model_type`, or nullptr.
const Architecture* find_architecture(std::string_view model_type);
// "bert (bert), mpnet (mpnet), roberta (roberta, xlm-roberta, camembert)"
std::string supported_architectures();

}  // namespace tessera::model
