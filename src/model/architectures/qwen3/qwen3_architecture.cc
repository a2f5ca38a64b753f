#include "model/architectures/qwen3/qwen3_architecture.h"

#include "model/architectures/decoder_layouts.h"
#include "model/layers/pre_norm_layer.h"

namespace tessera::model {

namespace {

class Qwen3 final : public Architecture {
 public:
  const char* name() const override { return "qwen3"; }
  std::vector<std::string> model_types() const override { return {"qwen3"}; }
  bool runs_head(HeadKind h) const override { return h == HeadKind::kNone; }

  Status read_config(const nlohmann::json& j, const std::string& path,
                     NetworkConfig* c) const override {
    TESSERA_RETURN_IF_ERROR(read_llama_style_decoder(j, path, 1e-6f, c));
    c->qk_norm = true;
    c->attention_bias = false;
    return config_fields::get_bool(j, path, "attention_bias", &c->attention_bias);
  }

  WeightNames weight_names(const NetworkConfig&) const override {
    WeightNames n = llama_style_names();
    n.q_norm = "self_attn.q_norm";
    n.k_norm = "self_attn.k_norm";
    return n;
  }

  // Pre-norm layers with per-head RMSNorm of Q and K before rotary, a final
  // norm; the word embeddings alone feed layer 0.
  Status forward(const ForwardPass& f) const override {
    return run_rotary_stack(f, run_pre_norm_layer);
  }
};

}  // namespace

const Architecture& qwen3_architecture() {
  static const Qwen3 qwen3;
  return qwen3;
}

}  // namespace tessera::model
