#include "model/architectures/qwen2/qwen2_architecture.h"

#include "model/architectures/decoder_layouts.h"
#include "model/layers/pre_norm_layer.h"

namespace tessera::model {

namespace {

// transformers' Qwen2Model: q_proj, k_proj and v_proj carry biases (fixed in
// its code: config.json has no field for them), o_proj and the MLP none.
// Causal, as transformers runs it; the embedders pool its last token.
class Qwen2 final : public Architecture {
 public:
  const char* name() const override { return "qwen2"; }
  std::vector<std::string> model_types() const override { return {"qwen2"}; }
  bool runs_head(HeadKind h) const override { return h == HeadKind::kNone; }

  Status read_config(const nlohmann::json& j, const std::string& path,
                     NetworkConfig* c) const override {
    TESSERA_RETURN_IF_ERROR(read_llama_style_decoder(j, path, 1e-6f, c));
    c->attention_bias = true;
    c->attention_out_bias = false;
    return Status::Ok();
  }

  WeightNames weight_names(const NetworkConfig&) const override { return llama_style_names(); }

  // Pre-norm layers with rotary Q and K, a final norm.
  Status forward(const ForwardPass& f) const override {
    return run_rotary_stack(f, run_pre_norm_layer);
  }
};

}  // namespace

const Architecture& qwen2_architecture() {
  static const Qwen2 qwen2;
  return qwen2;
}

}  // namespace tessera::model
