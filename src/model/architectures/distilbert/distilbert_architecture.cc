#include "model/architectures/distilbert/distilbert_architecture.h"

#include "model/config_fields.h"
#include "model/layers/encoder_layer.h"
#include "runtime/json_input.h"

namespace tessera::model {

namespace {

// transformers' DistilBertModel: embeddings (word + learned position, then
// LayerNorm; no token types), and per layer attention -> sa_layer_norm, FFN
// (lin1, activation, lin2) -> output_layer_norm: BERT's post-norm layer.
// config.json names its sizes dim / n_heads / n_layers / hidden_dim (read as
// alternatives of the common fields) and its activation "activation"; every
// LayerNorm has eps 1e-12, fixed in the model's code.
class DistilBert final : public Architecture {
 public:
  const char* name() const override { return "distilbert"; }
  std::vector<std::string> model_types() const override { return {"distilbert"}; }
  // DistilBertForSequenceClassification's head is pre_classifier -> ReLU ->
  // classifier, not BERT's tanh pooler: not run yet.
  bool runs_head(HeadKind h) const override { return h == HeadKind::kNone; }

  Status read_config(const nlohmann::json& j, const std::string& path,
                     NetworkConfig* c) const override {
    c->hidden_act_field = "activation";
    c->hidden_act = "gelu";
    TESSERA_RETURN_IF_ERROR(config_fields::get_string(j, path, "activation", &c->hidden_act));
    bool sinusoidal = false;
    TESSERA_RETURN_IF_ERROR(config_fields::get_bool(j, path, "sinusoidal_pos_embds", &sinusoidal));
    if (sinusoidal) {
      return unsupported(path +
                         ": sinusoidal_pos_embds = true is not supported (every DistilBERT "
                         "checkpoint on the Hub learned its positions: false)");
    }
    c->layer_norm_eps = 1e-12f;
    c->type_vocab_size = 0;
    return Status::Ok();
  }

  WeightNames weight_names(const NetworkConfig&) const override {
    WeightNames n;
    n.word_embeddings = "embeddings.word_embeddings.weight";
    n.position_embeddings = "embeddings.position_embeddings.weight";
    n.embeddings_norm = "embeddings.LayerNorm";
    n.layer = "transformer.layer.{}.";
    n.query = "attention.q_lin";
    n.key = "attention.k_lin";
    n.value = "attention.v_lin";
    n.attention_out = "attention.out_lin";
    n.attention_norm = "sa_layer_norm";
    n.ffn_in = "ffn.lin1";
    n.ffn_out = "ffn.lin2";
    n.ffn_norm = "output_layer_norm";
    return n;
  }

  // Embeddings (word + position, LayerNorm), then BERT's post-norm layers.
  Status forward(const ForwardPass& f) const override {
    embed_tokens(f);
    return run_layers(f, run_post_norm_layer);
  }
};

}  // namespace

const Architecture& distilbert_architecture() {
  static const DistilBert distilbert;
  return distilbert;
}

}  // namespace tessera::model
