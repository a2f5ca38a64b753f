#include "model/architectures/toy/toy_architecture.h"

#include "model/architectures/shared_layouts.h"
#include "model/config_fields.h"

namespace tessera::model {

namespace {

// model_type "toy_embeddings": a BERT checkpoint's embeddings alone. Its
// forward is the embedding sum (word + position + token type) and its
// LayerNorm; no layer runs, so its last hidden state can be checked by hand.
class Toy final : public Architecture {
 public:
  const char* name() const override { return "toy"; }
  std::vector<std::string> model_types() const override { return {"toy_embeddings"}; }
  bool runs_head(HeadKind h) const override { return h == HeadKind::kNone; }

  Status read_config(const nlohmann::json& j, const std::string& path,
                     NetworkConfig* c) const override {
    c->type_vocab_size = 2;
    return config_fields::get_int(j, path, "type_vocab_size", false, &c->type_vocab_size);
  }

  WeightNames weight_names(const NetworkConfig&) const override { return bert_module_names(); }

  Status forward(const ForwardPass& f) const override {
    embed_tokens(f);
    return Status::Ok();
  }
};

}  // namespace

const Architecture& toy_architecture() {
  static const Toy toy;
  return toy;
}

}  // namespace tessera::model
