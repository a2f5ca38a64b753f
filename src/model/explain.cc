#include "model/explain.h"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "model/architectures/architecture.h"
#include "model/config.h"
#include "model/encoder.h"
#include "model/tokenizer.h"
#include "model/tokenizers/tokenizer_model.h"

namespace tessera::model {

namespace {

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

void describe_network(const NetworkConfig& n, ModelExplanation* e) {
  std::string arch = std::string(n.architecture->name()) + " (model_type \"" + n.model_type + "\"";
  if (!n.class_names.empty()) arch += "; " + join(n.class_names, ", ");
  e->facts.emplace_back("architecture", arch + ")");
  std::string head = head_kind_name(n.head);
  if (n.head == HeadKind::kSequenceClassification) {
    head += ", " + std::to_string(n.num_labels) + " label" + (n.num_labels == 1 ? "" : "s") + " (" +
            join(n.id2label, ", ") + ")";
  }
  e->facts.emplace_back("head", head);
  std::string heads =
      std::to_string(n.num_attention_heads) + " heads of " + std::to_string(n.head_dim());
  if (n.kv_heads() != n.num_attention_heads) {
    heads += " sharing " + std::to_string(n.kv_heads()) + " key/value heads";
  }
  const std::string norm = n.norm == NormKind::kRmsNorm ? "RMSNorm"
                           : n.norm_bias                ? "LayerNorm"
                                                        : "LayerNorm without bias";
  std::string ffn = "FFN " + std::to_string(n.intermediate_size) + " " +
                    (n.gated_mlp ? std::string(activation_name(n.activation)) + "-gated"
                                 : std::string(activation_name(n.activation)));
  std::string block = std::string(block_kind_name(n.block)) + " " + norm + " (eps " +
                      std::to_string(n.layer_norm_eps) + ")";
  if (n.qk_norm) block += ", RMSNorm of each Q and K head";
  if (!n.attention_bias && !n.mlp_bias) block += ", no Linear biases";
  e->facts.emplace_back("layers", std::to_string(n.num_hidden_layers) + " x hidden " +
                                      std::to_string(n.hidden_size) + ", " + heads + ", " + ffn +
                                      ", " + block);
  // Layer attention: runs of equal masks and rotary bases, "0: full (theta 160000); 1-2: ...".
  if (!n.layer_attention.empty()) {
    std::string runs;
    int begin = 0;
    const auto describe = [&n](const LayerAttention& a) {
      std::string d = a.mask.kind == MaskKind::kNone ? "full" : a.mask.describe();
      if (n.rotary.dim > 0) {
        char theta[64];
        std::snprintf(theta, sizeof(theta), " (rope theta %g", static_cast<double>(a.rope_theta));
        d += theta;
        if (a.rope_linear_factor != 1.0f) {
          std::snprintf(theta, sizeof(theta), ", linear x%g",
                        static_cast<double>(a.rope_linear_factor));
          d += theta;
        }
        d += ")";
      }
      return d;
    };
    for (int l = 1; l <= n.num_hidden_layers; ++l) {
      if (l < n.num_hidden_layers &&
          describe(n.layer_attention[l]) == describe(n.layer_attention[begin])) {
        continue;
      }
      runs += (runs.empty() ? "" : "; ") + std::string("layer ") + std::to_string(begin) +
              (l - 1 > begin ? "-" + std::to_string(l - 1) : "") + ": " +
              describe(n.layer_attention[begin]);
      begin = l;
    }
    e->facts.emplace_back("attention", runs);
  }
  std::string positions;
  if (n.absolute_positions) {
    positions = "absolute, " + std::to_string(n.max_tokens()) + " tokens";
  } else if (n.rotary.dim > 0) {
    positions = "rotary over " + std::to_string(n.rotary.dim) + " of " +
                std::to_string(n.head_dim()) + " dims, " + std::to_string(n.max_tokens()) +
                " tokens";
  } else {
    positions = "none, " + std::to_string(n.max_tokens()) + " tokens";
  }
  if (n.position_offset > 0) {
    positions += " (ids from " + std::to_string(n.position_offset) + " = padding_idx + 1)";
  }
  if (n.relative_attention_num_buckets > 0) {
    positions += "; relative-position attention bias: " + std::to_string(n.relative_buckets_used) +
                 " buckets up to distance " + std::to_string(n.relative_max_distance) +
                 ", shared by every layer";
  }
  e->facts.emplace_back("positions", positions);
  e->facts.emplace_back("token types", n.type_vocab_size > 0 ? std::to_string(n.type_vocab_size)
                                                             : std::string("none"));
}

std::string describe_outputs(const ModelConfig& c) {
  const NetworkConfig& n = c.network;
  switch (n.head) {
    case HeadKind::kSequenceClassification:
      return "scores: rerank (query, texts) and predict, " + std::to_string(n.num_labels) +
             " raw logit" + (n.num_labels == 1 ? "" : "s") + " per pair";
    case HeadKind::kMaskedLm:
      return "sparse embeddings (SPLADE), " + std::to_string(n.vocab_size) + " dimensions";
    case HeadKind::kNone:
      break;
  }
  return "dense embeddings, " + std::to_string(c.embedding_dim()) + " dimensions";
}

// config_sentence_transformers.json's prompts: names and texts (JSON-quoted,
// so a newline stays on the line; long ones cut), and the default.
void describe_prompts(const Prompts& p, ModelExplanation* e) {
  constexpr size_t kShownChars = 60;
  std::string names;
  for (const auto& [name, text] : p.by_name) {
    const std::string shown = text.substr(0, kShownChars);
    names += (names.empty() ? "" : ", ") + name + " " +
             nlohmann::json(shown).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
             (shown.size() < text.size() ? "..." : "");
  }
  if (names.empty()) names = "none";
  if (!p.pooled) names += " (pooled without the prompt, include_prompt false: tessera refuses it)";
  e->facts.emplace_back("prompts", names);
  e->facts.emplace_back("default prompt", p.default_name.empty() ? "none" : p.default_name);
}

// Tokenizer::describe()'s "key: value" lines as facts "tokenizer KEY".
void describe_tokenizer(const Tokenizer& t, ModelExplanation* e) {
  const std::string d = t.describe();
  size_t begin = 0;
  while (begin < d.size()) {
    const size_t end = std::min(d.find('\n', begin), d.size());
    const std::string line = d.substr(begin, end - begin);
    const size_t colon = line.find(": ");
    if (colon != std::string::npos) {
      const std::string key = line.substr(0, colon);
      e->facts.emplace_back(key == "tokenizer" ? key : "  " + key, line.substr(colon + 2));
    } else if (!line.empty()) {
      e->facts.emplace_back("tokenizer", line);
    }
    begin = end + 1;
  }
}

}  // namespace

ModelExplanation explain_model(const std::string& model_dir, Context& ctx) {
  ModelExplanation e;
  e.facts.emplace_back("model", model_dir);
  ModelConfig config;
  e.status = load_model_config(model_dir, &config);
  if (!e.status.ok()) return e;
  describe_network(config.network, &e);
  std::string dense;
  for (const DenseModule& d : config.dense) {
    dense += " + dense " + std::to_string(d.in_features) + " -> " + std::to_string(d.out_features) +
             " " + dense_activation_name(d.activation) + (d.bias ? "" : " (no bias)") +
             (d.residual ? " (+ residual)" : "");
  }
  e.facts.emplace_back("pooling", std::string(config.sparse ? "splade (max of log(1 + relu))"
                                                            : pooling_name(config.pooling)) +
                                      dense + (config.normalize ? " + normalize" : "") +
                                      ", max_seq_length " + std::to_string(config.max_seq_length));
  describe_prompts(config.prompts, &e);
  Tokenizer tokenizer;
  e.status = Tokenizer::load(config.transformer_dir, &tokenizer);
  if (!e.status.ok()) return e;
  describe_tokenizer(tokenizer, &e);
  e.facts.emplace_back("outputs", describe_outputs(config));
  std::unique_ptr<Encoder> encoder;
  e.status = Encoder::load(model_dir, EncoderOptions{}, ctx, &encoder);
  if (!e.status.ok()) return e;
  char mib[64];
  std::snprintf(mib, sizeof(mib), "%.1f MiB f32 (%s)",
                static_cast<double>(encoder->weight_bytes()) / (1 << 20),
                config.weights_path.c_str());
  e.facts.emplace_back("weights", mib);
  return e;
}

std::string supported_models() {
  std::string out = "architectures:\n";
  for (const Architecture* a : architectures()) {
    const bool rerank = a->runs_head(HeadKind::kSequenceClassification);
    const bool splade = a->runs_head(HeadKind::kMaskedLm);
    out += "  " + std::string(a->name()) + ": model_type " + join(a->model_types(), ", ") +
           (!rerank && !splade ? std::string("; embedding (*Model) only\n")
                               : std::string("; heads: embedding (*Model)") +
                                     (rerank ? ", sequence classification (rerank)" : "") +
                                     (splade ? ", masked LM (SPLADE)" : "") + "\n");
  }
  out += "tokenizers (tokenizer.json model.type):\n";
  for (const tokenizers::TokenizerType* t : tokenizers::builtin_tokenizer_types()) {
    out += "  " + std::string(t->model_type) + "\n";
  }
  return out;
}

}  // namespace tessera::model
