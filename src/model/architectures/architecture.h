// The model seam: one folder per architecture under src/model/architectures/
// (bert/, mpnet/, roberta/ ...), found by the build, not listed (see
// CMakeLists.txt here). An architecture says which config.json model_types
// it accepts, reads its own config fields, and names its checkpoint's
// tensors. The forward pass is assembled from the shared layers (layers/,
// heads/); attention runs only through the dispatcher. A folder names no
// other architecture; deleting one still builds (its model_type is then
// refused with the supported list).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "model/config.h"
#include "tessera/status.h"

namespace tessera::model {

// The names of one checkpoint layout's tensors. Encoder names are relative to
// the prefix the file uses (whatever precedes `word_embeddings`: "",
// "bert.", "roberta.", "mpnet."); "{}" in `layer` is the layer index. A
// Linear or LayerNorm "x" means the tensors "x.weight" and "x.bias".
struct WeightNames {
  std::string word_embeddings;        // a full tensor name ("embeddings.word_embeddings.weight")
  std::string position_embeddings;    // a full tensor name
  std::string token_type_embeddings;  // a full tensor name; "" when the model has none
  std::string embeddings_norm;        // LayerNorm
  std::string layer;                  // "encoder.layer.{}."
  // Relative to `layer`: Linear layers and LayerNorms of one post-LN layer.
  std::string query, key, value, attention_out, attention_norm, ffn_in, ffn_out, ffn_norm;
  std::string relative_attention_bias;  // a full tensor name [buckets, heads]; "" when none
  // Heads, looked up under the prefix first, then as given (HF keeps
  // "classifier" and "cls." outside the base model's prefix).
  std::string classifier_dense;  // Linear H -> H, then tanh
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
};

// Every architecture this build has, in folder-name order (generated from
// the folders: architectures/CMakeLists.txt).
const std::vector<const Architecture*>& architectures();
// The architecture that accepts `model_type`, or nullptr.
const Architecture* find_architecture(std::string_view model_type);
// "bert (bert), mpnet (mpnet), roberta (roberta, xlm-roberta, camembert)"
std::string supported_architectures();

}  // namespace tessera::model
