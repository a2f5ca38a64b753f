#include "model/architectures/mpnet/mpnet_architecture.h"

#include "model/architectures/shared_layouts.h"
#include "model/config_fields.h"
#include "model/layers/encoder_layer.h"
#include "model/layers/relative_position_bias.h"

namespace tessera::model {

namespace {

class Mpnet final : public Architecture {
 public:
  const char* name() const override { return "mpnet"; }
  std::vector<std::string> model_types() const override { return {"mpnet"}; }

  Status read_config(const nlohmann::json& j, const std::string& path,
                     NetworkConfig* c) const override {
    int pad = 1;
    TESSERA_RETURN_IF_ERROR(config_fields::get_index(j, path, "pad_token_id", &pad));
    c->position_offset = pad + 1;
    c->type_vocab_size = 0;
    // HF's MPNet buckets with 32 and distance 128 whatever the config says
    // (compute_position_bias' defaults); the config sizes the table only.
    c->relative_buckets_used = 32;
    c->relative_max_distance = 128;
    c->relative_attention_num_buckets = 32;
    TESSERA_RETURN_IF_ERROR(config_fields::get_int(j, path, "relative_attention_num_buckets", false,
                                                   &c->relative_attention_num_buckets));
    if (c->relative_attention_num_buckets < c->relative_buckets_used) {
      return invalid_argument(path + ": relative_attention_num_buckets = " +
                              std::to_string(c->relative_attention_num_buckets) +
                              " is below the 32 buckets MPNet's attention reads");
    }
    return Status::Ok();
  }

  WeightNames weight_names(const NetworkConfig&) const override {
    WeightNames n;
    n.word_embeddings = "embeddings.word_embeddings.weight";
    n.position_embeddings = "embeddings.position_embeddings.weight";
    n.embeddings_norm = "embeddings.LayerNorm";
    n.layer = "encoder.layer.{}.";
    n.query = "attention.attn.q";
    n.key = "attention.attn.k";
    n.value = "attention.attn.v";
    n.attention_out = "attention.attn.o";
    n.attention_norm = "attention.LayerNorm";
    n.ffn_in = "intermediate.dense";
    n.ffn_out = "output.dense";
    n.ffn_norm = "output.LayerNorm";
    n.relative_attention_bias = "encoder.relative_attention_bias.weight";
    set_roberta_style_heads(&n);
    return n;
  }

  // BERT's post-norm layers with one relative-position bias, computed once
  // per batch and added to every layer's attention scores.
  Status forward(const ForwardPass& f) const override {
    RelativePositionBias bias;
    if (f.weights.relative_attention_bias != nullptr) {
      TESSERA_RETURN_IF_ERROR(bias.build(f));
      f.batch.attention_bias = bias.view();
    }
    embed_tokens(f);
    return run_layers(f, run_post_norm_layer);
  }
};

}  // namespace

const Architecture& mpnet_architecture() {
  static const Mpnet mpnet;
  return mpnet;
}

}  // namespace tessera::model
