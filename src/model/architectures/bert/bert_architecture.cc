#include "model/architectures/bert/bert_architecture.h"

#include "model/architectures/post_ln_names.h"
#include "model/config_fields.h"
#include "runtime/json_input.h"

namespace tessera::model {

namespace {

class Bert final : public Architecture {
 public:
  const char* name() const override { return "bert"; }
  std::vector<std::string> model_types() const override { return {"bert"}; }

  Status read_config(const nlohmann::json& j, const std::string& path,
                     NetworkConfig* c) const override {
    std::string positions = "absolute";
    TESSERA_RETURN_IF_ERROR(
        config_fields::get_string(j, path, "position_embedding_type", &positions));
    if (positions != "absolute") {
      return unsupported(path + ": position_embedding_type \"" + json_input::clip(positions) +
                         "\" is not supported; supported: \"absolute\"");
    }
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
};

}  // namespace

const Architecture& bert_architecture() {
  static const Bert bert;
  return bert;
}

}  // namespace tessera::model
