#include "model/architectures/nomic_bert/nomic_bert_architecture.h"

#include "model/architectures/rope_fields.h"
#include "model/config_fields.h"
#include "model/layers/encoder_layer.h"
#include "runtime/json_input.h"

namespace tessera::model {

namespace {

// config.json comes in two shapes: the Hub's remote-code NomicBertConfig
// (n_embd, activation_function "swiglu", rotary_emb_base, qkv_proj_bias ...)
// that nomic-ai/nomic-embed-text-v1.5 ships, and transformers 5's
// NomicBertConfig (hidden_size, hidden_act "silu", rope_parameters). The
// common readers take both names ("hidden_size|n_embd"); the rest is here.
// Both shapes store the Hub's tensor names (transformers 5 converts them
// when loading and back when saving).
class NomicBert final : public Architecture {
 public:
  const char* name() const override { return "nomic_bert"; }
  std::vector<std::string> model_types() const override { return {"nomic_bert"}; }
  bool runs_head(HeadKind h) const override { return h == HeadKind::kNone; }

  Status read_config(const nlohmann::json& j, const std::string& path,
                     NetworkConfig* c) const override {
    using config_fields::get_bool;
    TESSERA_RETURN_IF_ERROR(config_fields::get_epsilon(j, path, "layer_norm_eps|layer_norm_epsilon",
                                                       &c->layer_norm_eps));
    if (j.contains("activation_function")) {
      // The remote code's gated MLP: fc2(act(fc12 x) * fc11 x).
      std::string act;
      TESSERA_RETURN_IF_ERROR(config_fields::get_string(j, path, "activation_function", &act));
      c->hidden_act_field = "activation_function";
      if (act == "swiglu") {
        c->hidden_act = "silu";
      } else if (act == "geglu") {
        c->hidden_act = "gelu";
      } else {
        return unsupported(path + ": activation_function \"" + json_input::clip(act) +
                           "\" is not supported; supported: \"swiglu\", \"geglu\"");
      }
    }
    for (const char* off : {"prenorm", "causal", "rotary_emb_interleaved", "parallel_block"}) {
      bool on = false;
      TESSERA_RETURN_IF_ERROR(get_bool(j, path, off, &on));
      if (on) {
        return unsupported(path + ": " + off +
                           " = true is not supported (nomic-embed-text's "
                           "checkpoints have false)");
      }
    }
    for (const char* absent : {"rotary_scaling_factor", "rotary_emb_scale_base"}) {
      const auto it = j.find(absent);
      if (it != j.end() && !it->is_null()) {
        return unsupported(
            path + ": " + absent + " = " + json_input::render(*it) +
            " is not supported (dynamic NTK / xPos rotary scaling); supported: null");
      }
    }
    bool qkv_bias = false, fc1_bias = false, fc2_bias = false;
    TESSERA_RETURN_IF_ERROR(get_bool(j, path, "qkv_proj_bias", &qkv_bias));
    TESSERA_RETURN_IF_ERROR(get_bool(j, path, "mlp_fc1_bias", &fc1_bias));
    TESSERA_RETURN_IF_ERROR(get_bool(j, path, "mlp_fc2_bias", &fc2_bias));
    if (fc1_bias != fc2_bias) {
      return unsupported(path + ": mlp_fc1_bias and mlp_fc2_bias differ; supported: both equal");
    }
    c->attention_bias = qkv_bias;
    c->mlp_bias = fc1_bias;
    c->gated_mlp = true;
    c->absolute_positions = false;
    c->type_vocab_size = 2;
    TESSERA_RETURN_IF_ERROR(
        config_fields::get_int(j, path, "type_vocab_size", false, &c->type_vocab_size));
    float fraction = 1.0f;
    TESSERA_RETURN_IF_ERROR(config_fields::get_positive(j, path, "rotary_emb_fraction", &fraction));
    c->rotary.dim = static_cast<int>(fraction * static_cast<float>(c->head_dim()));
    LayerAttention a;
    a.rope_theta = 1000.0f;  // transformers' NomicBertConfig default
    TESSERA_RETURN_IF_ERROR(read_rope(j, path, "rope_theta|rotary_emb_base", &a));
    c->layer_attention.assign(c->num_hidden_layers, a);
    return Status::Ok();
  }

  WeightNames weight_names(const NetworkConfig&) const override {
    WeightNames n;
    n.word_embeddings = "embeddings.word_embeddings.weight";
    n.token_type_embeddings = "embeddings.token_type_embeddings.weight";
    n.embeddings_norm = "emb_ln";
    n.layer = "encoder.layers.{}.";
    n.qkv = "attn.Wqkv";
    n.attention_out = "attn.out_proj";
    n.attention_norm = "norm1";
    n.ffn_gate = "mlp.fc12";
    n.ffn_in = "mlp.fc11";
    n.ffn_out = "mlp.fc2";
    n.ffn_norm = "norm2";
    return n;
  }

  // Post-norm layers with rotary Q and K and a SwiGLU FFN (no position table).
  Status forward(const ForwardPass& f) const override {
    return run_rotary_stack(f, run_post_norm_layer);
  }
};

}  // namespace

const Architecture& nomic_bert_architecture() {
  static const NomicBert nomic;
  return nomic;
}

}  // namespace tessera::model
