#include "model/architectures/eurobert/eurobert_architecture.h"

#include "model/architectures/decoder_layouts.h"
#include "model/layers/pre_norm_layer.h"

namespace tessera::model {

namespace {

// transformers' EuroBertModel: the Llama-style stack of decoder_layouts.h
// with every token attending to every other (create_bidirectional_mask), and
// the biases config.json's attention_bias / mlp_bias ask for (none in the
// released checkpoints).
class EuroBert final : public Architecture {
 public:
  const char* name() const override { return "eurobert"; }
  std::vector<std::string> model_types() const override { return {"eurobert"}; }
  // EuroBertForSequenceClassification pools in its own ways
  // (classifier_pooling bos / mean / late): not run yet.
  bool runs_head(HeadKind h) const override { return h == HeadKind::kNone; }

  Status read_config(const nlohmann::json& j, const std::string& path,
                     NetworkConfig* c) const override {
    TESSERA_RETURN_IF_ERROR(read_llama_style_decoder(j, path, 1e-5f, c));
    for (LayerAttention& a : c->layer_attention) a.mask = Mask::none();
    c->attention_bias = false;
    TESSERA_RETURN_IF_ERROR(config_fields::get_bool(j, path, "attention_bias", &c->attention_bias));
    return config_fields::get_bool(j, path, "mlp_bias", &c->mlp_bias);
  }

  WeightNames weight_names(const NetworkConfig&) const override { return llama_style_names(); }

  // Pre-norm layers with rotary Q and K over the whole sequence, a final norm.
  Status forward(const ForwardPass& f) const override {
    return run_rotary_stack(f, run_pre_norm_layer);
  }
};

}  // namespace

const Architecture& eurobert_architecture() {
  static const EuroBert eurobert;
  return eurobert;
}

}  // namespace tessera::model
