#include "model/architectures/qwen3/qwen3_architecture.h"

#include "model/architectures/rope_fields.h"
#include "model/config_fields.h"
#include "model/layers/pre_norm_layer.h"
#include "runtime/json_input.h"

namespace tessera::model {

namespace {

class Qwen3 final : public Architecture {
 public:
  const char* name() const override { return "qwen3"; }
  std::vector<std::string> model_types() const override { return {"qwen3"}; }
  bool runs_heads() const override { return false; }

  Status read_config(const nlohmann::json& j, const std::string& path,
                     NetworkConfig* c) const override {
    c->hidden_act = "silu";
    TESSERA_RETURN_IF_ERROR(config_fields::get_string(j, path, "hidden_act", &c->hidden_act));
    c->layer_norm_eps = 1e-6f;
    TESSERA_RETURN_IF_ERROR(
        config_fields::get_epsilon(j, path, "rms_norm_eps", &c->layer_norm_eps));
    c->attention_bias = false;
    TESSERA_RETURN_IF_ERROR(config_fields::get_bool(j, path, "attention_bias", &c->attention_bias));
    bool sliding = false;
    TESSERA_RETURN_IF_ERROR(config_fields::get_bool(j, path, "use_sliding_window", &sliding));
    if (sliding) {
      return unsupported(path +
                         ": use_sliding_window = true is not supported (Qwen3-Embedding "
                         "checkpoints have false)");
    }
    c->block = BlockKind::kPreNorm;
    c->norm = NormKind::kRmsNorm;
    c->gated_mlp = true;
    c->mlp_bias = false;
    c->qk_norm = true;
    c->absolute_positions = false;
    c->embedding_norm = false;
    c->final_norm = true;
    c->type_vocab_size = 0;
    c->rotary.dim = c->head_dim();
    LayerAttention a;
    a.mask = Mask::causal();
    TESSERA_RETURN_IF_ERROR(read_rope(j, path, "rope_theta", &a));
    c->layer_attention.assign(c->num_hidden_layers, a);
    // transformers 5 writes layer_types; every layer must be a full (causal)
    // one, and the list one entry per layer (checked with the others in
    // config.cc), as transformers' layer_type_validation refuses.
    const auto types = j.find("layer_types");
    if (types == j.end() || types->is_null()) return Status::Ok();
    if (!types->is_array()) {
      return invalid_argument(path + ": field 'layer_types' = " + json_input::render(*types) +
                              " must be an array");
    }
    c->layer_attention.clear();
    for (size_t i = 0; i < types->size(); ++i) {
      const nlohmann::json& t = (*types)[i];
      if (t != "full_attention") {
        return unsupported(path + ": layer_types[" + std::to_string(i) +
                           "] = " + json_input::render(t) +
                           " is not supported; supported: \"full_attention\" (Qwen3-Embedding "
                           "checkpoints have no sliding layers)");
      }
      c->layer_attention.push_back(a);
    }
    return Status::Ok();
  }

  WeightNames weight_names(const NetworkConfig&) const override {
    WeightNames n;
    n.word_embeddings = "embed_tokens.weight";
    n.final_norm = "norm";
    n.layer = "layers.{}.";
    n.query = "self_attn.q_proj";
    n.key = "self_attn.k_proj";
    n.value = "self_attn.v_proj";
    n.q_norm = "self_attn.q_norm";
    n.k_norm = "self_attn.k_norm";
    n.attention_out = "self_attn.o_proj";
    n.attention_norm = "input_layernorm";
    n.ffn_gate = "mlp.gate_proj";
    n.ffn_in = "mlp.up_proj";
    n.ffn_out = "mlp.down_proj";
    n.ffn_norm = "post_attention_layernorm";
    return n;
  }

  // Pre-norm layers with per-head RMSNorm of Q and K before rotary, a final
  // norm; the word embeddings alone feed layer 0.
  Status forward(const ForwardPass& f) const override {
    RotaryTables rope;
    TESSERA_RETURN_IF_ERROR(rope.build(f));
    embed_tokens(f);
    TESSERA_RETURN_IF_ERROR(run_layers(f, run_pre_norm_layer, &rope));
    run_final_norm(f);
    return Status::Ok();
  }
};

}  // namespace

const Architecture& qwen3_architecture() {
  static const Qwen3 qwen3;
  return qwen3;
}

}  // namespace tessera::model
