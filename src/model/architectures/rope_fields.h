// The rotary settings of config.json in the shapes users' checkpoints have:
// transformers 5's `rope_parameters` ({"rope_type", "rope_theta", "factor"},
// or one such object per layer type: ModernBERT), and the older top-level
// `rope_theta` with `rope_scaling` ({"type" or "rope_type", "factor"}).
// Supported rope types: "default" and "linear"; any other (yarn, dynamic,
// llama3, longrope ...) is refused naming the field and the value, never
// run as if it were default.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "model/config.h"
#include "tessera/status.h"

namespace tessera::model {

// One parameter object at `field` ("rope_parameters",
// "rope_parameters.sliding_attention", "rope_scaling"): its type and factor
// into `a`, and its rope_theta when present.
Status read_rope_object(const nlohmann::json& object, const std::string& path,
                        const std::string& field, LayerAttention* a);

// A single-type config (NomicBERT, Qwen3): `rope_parameters` if present,
// else `theta_keys` ("rope_theta" or "rope_theta|rotary_emb_base") and
// `rope_scaling`. `a` keeps its theta where the config names none.
Status read_rope(const nlohmann::json& j, const std::string& path, const char* theta_keys,
                 LayerAttention* a);

}  // namespace tessera::model
