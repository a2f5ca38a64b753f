#include "model/architectures/modernbert/modernbert_architecture.h"

#include "model/architectures/rope_fields.h"
#include "model/config_fields.h"
#include "model/layers/pre_norm_layer.h"
#include "runtime/json_input.h"

namespace tessera::model {

namespace {

// config.json comes in two shapes: the Hub checkpoints'
// (global_attn_every_n_layers, global_rope_theta, local_rope_theta) and
// transformers 5's (layer_types, rope_parameters per layer type). Both give
// each layer its mask and its rotary base here. A local layer's query i sees
// key j iff |i - j| <= local_attention / 2 (transformers'
// sliding_window_bidirectional_overlay), the contract's window(w, w): the
// flash kernels skip every key block outside it.
class ModernBert final : public Architecture {
 public:
  const char* name() const override { return "modernbert"; }
  std::vector<std::string> model_types() const override { return {"modernbert"}; }
  // The sequence-classification head (gte-reranker-modernbert-base and
  // other ModernBERT cross-encoders); no masked-LM head names yet.
  bool runs_head(HeadKind h) const override { return h != HeadKind::kMaskedLm; }

  Status read_config(const nlohmann::json& j, const std::string& path,
                     NetworkConfig* c) const override {
    using config_fields::get_bool;
    c->hidden_act_field = "hidden_activation";
    TESSERA_RETURN_IF_ERROR(
        config_fields::get_string(j, path, "hidden_activation", &c->hidden_act));
    c->layer_norm_eps = 1e-5f;
    TESSERA_RETURN_IF_ERROR(config_fields::get_epsilon(j, path, "norm_eps", &c->layer_norm_eps));
    c->norm_bias = false;
    c->attention_bias = false;
    c->mlp_bias = false;
    TESSERA_RETURN_IF_ERROR(get_bool(j, path, "norm_bias", &c->norm_bias));
    TESSERA_RETURN_IF_ERROR(get_bool(j, path, "attention_bias", &c->attention_bias));
    TESSERA_RETURN_IF_ERROR(get_bool(j, path, "mlp_bias", &c->mlp_bias));
    c->block = BlockKind::kPreNorm;
    c->gated_mlp = true;
    c->absolute_positions = false;
    c->type_vocab_size = 0;
    c->first_layer_norm = false;  // layer 0's attn_norm is an Identity
    // ModernBertForSequenceClassification: pool, dense, activation, norm.
    std::string pooling = "cls", activation = "gelu";
    TESSERA_RETURN_IF_ERROR(config_fields::get_string(j, path, "classifier_pooling", &pooling));
    TESSERA_RETURN_IF_ERROR(
        config_fields::get_string(j, path, "classifier_activation", &activation));
    if (c->head == HeadKind::kSequenceClassification) {
      if (pooling != "cls" && pooling != "mean") {
        return unsupported(path + ": classifier_pooling \"" + json_input::clip(pooling) +
                           "\" is not supported; supported: \"cls\", \"mean\"");
      }
      if (activation != "gelu") {
        return unsupported(path + ": classifier_activation \"" + json_input::clip(activation) +
                           "\" is not supported; supported: \"gelu\"");
      }
    }
    c->classifier.mean_pooling = pooling == "mean";
    c->classifier.gelu = true;
    c->classifier.norm = true;
    c->classifier.dense_bias = false;
    TESSERA_RETURN_IF_ERROR(get_bool(j, path, "classifier_bias", &c->classifier.dense_bias));
    c->final_norm = true;
    c->rotary.dim = c->head_dim();

    int local = 128;
    TESSERA_RETURN_IF_ERROR(config_fields::get_int(j, path, "local_attention", false, &local));
    const int64_t half = local / 2;
    LayerAttention global, sliding;
    global.rope_theta = 160000.0f;
    sliding.rope_theta = 10000.0f;
    sliding.mask = Mask::window(half, half);
    const auto params = j.find("rope_parameters");
    if (params != j.end() && !params->is_null()) {
      if (params->contains("full_attention") || params->contains("sliding_attention")) {
        TESSERA_RETURN_IF_ERROR(read_part(*params, path, "full_attention", &global));
        TESSERA_RETURN_IF_ERROR(read_part(*params, path, "sliding_attention", &sliding));
      } else {
        TESSERA_RETURN_IF_ERROR(read_rope_object(*params, path, "rope_parameters", &global));
        TESSERA_RETURN_IF_ERROR(read_rope_object(*params, path, "rope_parameters", &sliding));
      }
    } else {
      // The Hub shape: a base per layer type, and any rope_scaling for both.
      TESSERA_RETURN_IF_ERROR(read_rope(j, path, "global_rope_theta", &global));
      TESSERA_RETURN_IF_ERROR(read_rope(j, path, "local_rope_theta", &sliding));
    }

    c->layer_attention.clear();
    const auto types = j.find("layer_types");
    if (types != j.end() && !types->is_null()) {
      if (!types->is_array()) {
        return invalid_argument(path + ": field 'layer_types' = " + json_input::render(*types) +
                                " must be an array");
      }
      for (size_t i = 0; i < types->size(); ++i) {
        const nlohmann::json& t = (*types)[i];
        if (t == "full_attention") {
          c->layer_attention.push_back(global);
        } else if (t == "sliding_attention") {
          c->layer_attention.push_back(sliding);
        } else {
          return unsupported(path + ": layer_types[" + std::to_string(i) +
                             "] = " + json_input::render(t) +
                             " is not supported; supported: \"full_attention\", "
                             "\"sliding_attention\"");
        }
      }
    } else {
      int every = 3;
      TESSERA_RETURN_IF_ERROR(
          config_fields::get_int(j, path, "global_attn_every_n_layers", false, &every));
      for (int l = 0; l < c->num_hidden_layers; ++l) {
        c->layer_attention.push_back(l % every == 0 ? global : sliding);
      }
    }
    return Status::Ok();
  }

  WeightNames weight_names(const NetworkConfig&) const override {
    WeightNames n;
    n.word_embeddings = "embeddings.tok_embeddings.weight";
    n.embeddings_norm = "embeddings.norm";
    n.final_norm = "final_norm";
    n.layer = "layers.{}.";
    n.qkv = "attn.Wqkv";
    n.attention_out = "attn.Wo";
    n.attention_norm = "attn_norm";
    n.ffn_in = "mlp.Wi";  // [input; gate]: gelu(input) * gate
    n.ffn_out = "mlp.Wo";
    n.ffn_norm = "mlp_norm";
    n.classifier_dense = "head.dense";
    n.classifier_norm = "head.norm";
    n.classifier_out = "classifier";
    return n;
  }

  // Pre-norm layers (layer 0 without its attention norm), rotary with a base
  // per layer type, a final norm.
  Status forward(const ForwardPass& f) const override {
    return run_rotary_stack(f, run_pre_norm_layer);
  }

 private:
  static Status read_part(const nlohmann::json& params, const std::string& path, const char* type,
                          LayerAttention* a) {
    const auto it = params.find(type);
    if (it == params.end()) return Status::Ok();
    return read_rope_object(*it, path, std::string("rope_parameters.") + type, a);
  }
};

}  // namespace

const Architecture& modernbert_architecture() {
  static const ModernBert modernbert;
  return modernbert;
}

}  // namespace tessera::model
