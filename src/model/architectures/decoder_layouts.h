// What the Llama-style folders share because transformers' Qwen2Model,
// Qwen3Model and EuroBertModel share it: a pre-norm stack with RMSNorm,
// SwiGLU, rotary positions on every head dimension (causal for Qwen,
// bidirectional for EuroBERT), config.json's rms_norm_eps / rope /
// sliding-window fields, and the tensor names. Each folder starts from here
// and sets what differs (Qwen3's q/k norms, Qwen2's biases on Q, K and V,
// EuroBERT's bidirectional mask and optional biases).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "model/architectures/architecture.h"
#include "model/architectures/rope_fields.h"
#include "model/config_fields.h"
#include "runtime/json_input.h"

namespace tessera::model {

// The shared fields into `c`; `default_eps` is rms_norm_eps's value when
// config.json has none (the family's default in transformers). Sliding-window
// layers are refused (the embedding checkpoints have none); transformers 5's
// layer_types must list one "full_attention" per layer, as its
// layer_type_validation requires.
inline Status read_llama_style_decoder(const nlohmann::json& j, const std::string& path,
                                       float default_eps, NetworkConfig* c) {
  c->hidden_act = "silu";
  TESSERA_RETURN_IF_ERROR(config_fields::get_string(j, path, "hidden_act", &c->hidden_act));
  c->layer_norm_eps = default_eps;
  TESSERA_RETURN_IF_ERROR(config_fields::get_epsilon(j, path, "rms_norm_eps", &c->layer_norm_eps));
  bool sliding = false;
  TESSERA_RETURN_IF_ERROR(config_fields::get_bool(j, path, "use_sliding_window", &sliding));
  if (sliding) {
    return unsupported(path +
                       ": use_sliding_window = true is not supported (the embedding checkpoints "
                       "of these families have false)");
  }
  c->block = BlockKind::kPreNorm;
  c->norm = NormKind::kRmsNorm;
  c->gated_mlp = true;
  c->mlp_bias = false;
  c->absolute_positions = false;
  c->embedding_norm = false;
  c->final_norm = true;
  c->type_vocab_size = 0;
  c->rotary.dim = c->head_dim();
  LayerAttention a;
  a.mask = Mask::causal();
  TESSERA_RETURN_IF_ERROR(read_rope(j, path, "rope_theta", &a));
  c->layer_attention.assign(c->num_hidden_layers, a);
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
                         " is not supported; supported: \"full_attention\" (the embedding "
                         "checkpoints of these families have no sliding layers)");
    }
    c->layer_attention.push_back(a);
  }
  return Status::Ok();
}

inline WeightNames llama_style_names() {
  WeightNames n;
  n.word_embeddings = "embed_tokens.weight";
  n.final_norm = "norm";
  n.layer = "layers.{}.";
  n.query = "self_attn.q_proj";
  n.key = "self_attn.k_proj";
  n.value = "self_attn.v_proj";
  n.attention_out = "self_attn.o_proj";
  n.attention_norm = "input_layernorm";
  n.ffn_gate = "mlp.gate_proj";
  n.ffn_in = "mlp.up_proj";
  n.ffn_out = "mlp.down_proj";
  n.ffn_norm = "post_attention_layernorm";
  return n;
}

}  // namespace tessera::model
