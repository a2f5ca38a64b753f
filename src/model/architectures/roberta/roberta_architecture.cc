#include "model/architectures/roberta/roberta_architecture.h"

#include "model/architectures/post_ln_names.h"
#include "model/config_fields.h"
#include "runtime/json_input.h"

namespace tessera::model {

namespace {

class Roberta final : public Architecture {
 public:
  const char* name() const override { return "roberta"; }
  std::vector<std::string> model_types() const override {
    return {"roberta", "xlm-roberta", "camembert"};
  }

  Status read_config(const nlohmann::json& j, const std::string& path,
                     NetworkConfig* c) const override {
    std::string positions = "absolute";
    TESSERA_RETURN_IF_ERROR(
        config_fields::get_string(j, path, "position_embedding_type", &positions));
    if (positions != "absolute") {
      return unsupported(path + ": position_embedding_type \"" + json_input::clip(positions) +
                         "\" is not supported; supported: \"absolute\"");
    }
    // Position ids count from padding_idx + 1 (HF's
    // create_position_ids_from_input_ids): a packed sequence has no padding.
    int pad = 1;
    TESSERA_RETURN_IF_ERROR(config_fields::get_index(j, path, "pad_token_id", &pad));
    c->position_offset = pad + 1;
    c->type_vocab_size = 1;
    return config_fields::get_int(j, path, "type_vocab_size", false, &c->type_vocab_size);
  }

  WeightNames weight_names(const NetworkConfig&) const override {
    WeightNames n = bert_module_names();
    n.classifier_dense = "classifier.dense";
    n.classifier_out = "classifier.out_proj";
    n.mlm_transform = "lm_head.dense";
    n.mlm_norm = "lm_head.layer_norm";
    n.mlm_decoder = "lm_head.decoder.weight";
    n.mlm_bias = "lm_head.bias|lm_head.decoder.bias";
    return n;
  }
};

}  // namespace

const Architecture& roberta_architecture() {
  static const Roberta roberta;
  return roberta;
}

}  // namespace tessera::model
