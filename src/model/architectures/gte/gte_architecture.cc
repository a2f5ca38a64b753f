#include "model/architectures/gte/gte_architecture.h"

#include "model/architectures/rope_fields.h"
#include "model/config_fields.h"
#include "model/layers/encoder_layer.h"

namespace tessera::model {

namespace {

// transformers' GteModel: BERT's post-norm layer with rotary Q and K (no
// position table; word + token type embeddings, then LayerNorm), every
// attention product with a bias, and a gated FFN act(gate_proj x) *
// up_proj x whose two first products have no bias and whose down_proj has
// one. Bidirectional. The Hub checkpoints' remote-code config (model_type
// "new") names the same tensors but not the same config fields: refused
// until checked against it.
class Gte final : public Architecture {
 public:
  const char* name() const override { return "gte"; }
  std::vector<std::string> model_types() const override { return {"gte"}; }
  // GteForSequenceClassification (gte-reranker-*) is not checked yet.
  bool runs_head(HeadKind h) const override { return h == HeadKind::kNone; }

  Status read_config(const nlohmann::json& j, const std::string& path,
                     NetworkConfig* c) const override {
    c->gated_mlp = true;
    c->mlp_in_bias = false;
    c->absolute_positions = false;
    c->type_vocab_size = 1;
    TESSERA_RETURN_IF_ERROR(
        config_fields::get_int(j, path, "type_vocab_size", false, &c->type_vocab_size));
    c->rotary.dim = c->head_dim();
    LayerAttention a;
    a.rope_theta = 160000.0f;
    TESSERA_RETURN_IF_ERROR(read_rope(j, path, "rope_theta", &a));
    c->layer_attention.assign(c->num_hidden_layers, a);
    return Status::Ok();
  }

  // As save_pretrained writes them: the Hub layout (fused qkv_proj, and
  // up_gate_proj holding [up; gate]), which transformers splits on load.
  WeightNames weight_names(const NetworkConfig&) const override {
    WeightNames n;
    n.word_embeddings = "embeddings.word_embeddings.weight";
    n.token_type_embeddings = "embeddings.token_type_embeddings.weight";
    n.embeddings_norm = "embeddings.LayerNorm";
    n.layer = "encoder.layer.{}.";
    n.qkv = "attention.qkv_proj";
    n.attention_out = "attention.o_proj";
    n.attention_norm = "attn_ln";
    n.ffn_in = "mlp.up_gate_proj";
    n.ffn_in_up_first = true;
    n.ffn_out = "mlp.down_proj";
    n.ffn_norm = "mlp_ln";
    return n;
  }

  // Embeddings (word + token type, LayerNorm), then post-norm layers with
  // rotary Q and K and a gated FFN.
  Status forward(const ForwardPass& f) const override {
    return run_rotary_stack(f, run_post_norm_layer);
  }
};

}  // namespace

const Architecture& gte_architecture() {
  static const Gte gte;
  return gte;
}

}  // namespace tessera::model
