#include "model/architectures/bert/bert_architecture.h"

#include "model/architectures/shared_layouts.h"
#include "model/config_fields.h"
#include "model/layers/encoder_layer.h"

namespace tessera::model {

namespace {

class Bert final : public Architecture {
 public:
  const char* name() const override { return "bert"; }
  std::vector<std::string> model_types() const override { return {"bert"}; }

  Status read_config(const nlohmann::json& j, const std::string& path,
                     NetworkConfig* c) const override {
    TESSERA_RETURN_IF_ERROR(require_absolute_positions(j, path));
    c->type_vocab_size = 2;
    return config_fields::get_int(j, path, "type_vocab_size", false, &c->type_vocab_size);
  }

  WeightNames weight_names(const NetworkConfig&) const override {
    WeightNames n = bert_module_names();
    // BertForSequenceClassification: the pooler (under "bert.") feeds "classifier".
    n.classifier_dense = "pooler.dense";
    n.classifier_out = "classifier";
    n.mlm_transform = "cls.predictions.transform.dense";
    n.mlm_norm = "cls.predictions.transform.LayerNorm";
    n.mlm_decoder = "cls.predictions.decoder.weight";
    n.mlm_bias = "cls.predictions.bias|cls.predictions.decoder.bias";
    return n;
  }

  // Embeddings (word + position + token type, LayerNorm), then post-norm layers.
  Status forward(const ForwardPass& f) const override {
    embed_tokens(f);
    return run_layers(f, run_post_norm_layer);
  }
};

}  // namespace

const Architecture& bert_architecture() {
  static const Bert bert;
  return bert;
}

}  // namespace tessera::model
