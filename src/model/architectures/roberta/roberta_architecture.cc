#include "model/architectures/roberta/roberta_architecture.h"

#include "model/architectures/shared_layouts.h"
#include "model/config_fields.h"
#include "model/layers/encoder_layer.h"

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
    TESSERA_RETURN_IF_ERROR(require_absolute_positions(j, path));
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
    set_roberta_style_heads(&n);
    return n;
  }

  // BERT's: embeddings (positions from padding_idx + 1), post-norm layers.
  Status forward(const ForwardPass& f) const override {
    embed_tokens(f);
    return run_layers(f, run_post_norm_layer);
  }
};

}  // namespace

const Architecture& roberta_architecture() {
  static const Roberta roberta;
  return roberta;
}

}  // namespace tessera::model
