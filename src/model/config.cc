#include "model/config.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "model/architectures/architecture.h"
#include "model/config_fields.h"
#include "runtime/json_input.h"

namespace tessera::model {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using config_fields::get_bool;
using config_fields::get_int;
using config_fields::get_string;
using config_fields::read_object;

constexpr const char* kSupportedActs =
    "\"gelu\" (exact erf), \"gelu_pytorch_tanh\" / \"gelu_new\" (tanh form), \"silu\" / \"swish\"";
constexpr const char* kSupportedModules =
    "Transformer, Pooling (cls / mean / max / lasttoken / mean_sqrt_len_tokens / weightedmean), "
    "Dense (after Pooling), Normalize, "
    "MLMTransformer, SpladePooling (max), by their sentence-transformers 5.x or 6.x module path";

// A sentence-transformers module's class: the last component of its `type`
// under the package. The path moved in 6.0 (models.Transformer became
// base.modules.transformer.Transformer, models.Pooling
// sentence_transformer.modules.pooling.Pooling, sparse_encoder.models
// sparse_encoder.modules.*), and 5.x folders stay in use, so the class is what
// is matched; "" for a type outside the package.
std::string module_class(const std::string& type) {
  constexpr std::string_view kPackage = "sentence_transformers.";
  if (type.rfind(kPackage, 0) != 0) return "";
  const size_t dot = type.rfind('.');
  return type.substr(dot + 1);
}

Status read_json(const std::string& path, json* out) { return read_object(path, out); }

// The activation and the block's arithmetic: what the layers can run.
Status check_shape(const std::string& path, NetworkConfig& c) {
  const std::string& a = c.hidden_act;
  if (a == "gelu") {
    c.activation = Activation::kGelu;
  } else if (a == "gelu_pytorch_tanh" || a == "gelu_new") {
    c.activation = Activation::kGeluTanh;
  } else if (a == "silu" || a == "swish") {
    c.activation = Activation::kSilu;
  } else {
    return unsupported(path + ": " + c.hidden_act_field + " \"" + json_input::clip(a) +
                       "\" is not supported; supported: " + kSupportedActs);
  }
  // The GEMM epilogue fuses only the exact GELU; gated FFNs apply theirs in their own pass.
  if (!c.gated_mlp && c.activation != Activation::kGelu) {
    return unsupported(path + ": " + c.hidden_act_field + " \"" + json_input::clip(a) +
                       "\" is not supported for a " + c.architecture->name() +
                       " FFN; supported: \"gelu\" (exact erf)");
  }
  if (c.explicit_head_dim == 0 && c.hidden_size % c.num_attention_heads != 0) {
    return invalid_argument(
        path + ": hidden_size = " + std::to_string(c.hidden_size) +
        " is not a multiple of num_attention_heads = " + std::to_string(c.num_attention_heads));
  }
  if (c.num_attention_heads % c.kv_heads() != 0) {
    return invalid_argument(
        path + ": num_attention_heads = " + std::to_string(c.num_attention_heads) +
        " is not a multiple of num_key_value_heads = " + std::to_string(c.kv_heads()));
  }
  if (c.rotary.dim % 2 != 0 || c.rotary.dim > c.head_dim()) {
    return invalid_argument(path + ": the rotary embedding covers " + std::to_string(c.rotary.dim) +
                            " dimensions of heads of " + std::to_string(c.head_dim()) +
                            "; must be even and at most the head size");
  }
  if (!c.layer_attention.empty() &&
      c.layer_attention.size() != static_cast<size_t>(c.num_hidden_layers)) {
    return invalid_argument(
        path + ": field 'layer_types' has " + std::to_string(c.layer_attention.size()) +
        " entries for num_hidden_layers = " + std::to_string(c.num_hidden_layers) +
        "; it needs one per layer");
  }
  return Status::Ok();
}

// The head from config.json "architectures" (HF class names).
HeadKind head_of(const std::vector<std::string>& class_names) {
  const auto ends_with = [](const std::string& s, std::string_view tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  for (const std::string& n : class_names) {
    if (ends_with(n, "ForSequenceClassification")) return HeadKind::kSequenceClassification;
    if (ends_with(n, "ForMaskedLM")) return HeadKind::kMaskedLm;
  }
  return HeadKind::kNone;
}

// "architectures", "id2label" and the head they imply.
Status read_head(const json& j, const std::string& path, NetworkConfig* c) {
  const auto arch = j.find("architectures");
  if (arch != j.end() && !arch->is_null()) {
    if (!arch->is_array()) {
      return invalid_argument(path + ": field 'architectures' = " + json_input::render(*arch) +
                              " must be an array of strings");
    }
    for (const json& a : *arch) {
      if (!a.is_string()) {
        return invalid_argument(path + ": field 'architectures' holds " + json_input::render(a) +
                                ", not a string");
      }
      c->class_names.push_back(a.get<std::string>());
    }
  }
  c->head = head_of(c->class_names);
  if (c->head != HeadKind::kSequenceClassification) return Status::Ok();
  // HF writes id2label {"0": "LABEL_0", ...}; its default is two labels.
  const auto labels = j.find("id2label");
  if (labels == j.end() || labels->is_null()) {
    c->id2label = {"LABEL_0", "LABEL_1"};
  } else {
    if (!labels->is_object() || labels->empty() || labels->size() > 4096) {
      return invalid_argument(path + ": field 'id2label' = " + json_input::render(*labels) +
                              " must be an object of 1..4096 labels");
    }
    c->id2label.assign(labels->size(), "");
    for (const auto& [key, value] : labels->items()) {
      size_t used = 0;
      int index = -1;
      try {
        index = std::stoi(key, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != key.size() || index < 0 || index >= static_cast<int>(c->id2label.size()) ||
          !value.is_string() || !c->id2label[index].empty()) {
        return invalid_argument(path + ": field 'id2label' entry \"" + json_input::clip(key) +
                                "\" must map each index 0.." +
                                std::to_string(c->id2label.size() - 1) + " once to a string");
      }
      c->id2label[index] = value.get<std::string>();
    }
  }
  c->num_labels = static_cast<int>(c->id2label.size());
  return Status::Ok();
}

// sentence-transformers 6's Pooling config: "pooling_mode" (a name, or a list
// of them, concatenated) and "embedding_dimension".
Status load_pooling_mode(const json& j, const std::string& path, Pooling* out) {
  const json& mode = j["pooling_mode"];
  std::string name;
  if (mode.is_string()) {
    name = mode.get<std::string>();
  } else if (mode.is_array() && mode.size() == 1 && mode[0].is_string()) {
    name = mode[0].get<std::string>();
  } else {
    return unsupported(path + ": pooling_mode " + json_input::describe(mode) +
                       " is not supported; supported is one of \"cls\", \"mean\", \"max\", "
                       "\"lasttoken\", \"mean_sqrt_len_tokens\", \"weightedmean\"");
  }
  for (Pooling p : {Pooling::kCls, Pooling::kMean, Pooling::kMax, Pooling::kLastToken,
                    Pooling::kMeanSqrtLen, Pooling::kWeightedMean}) {
    if (name == pooling_name(p)) {
      *out = p;
      return Status::Ok();
    }
  }
  return unsupported(path + ": pooling_mode \"" + json_input::clip(name) +
                     "\" is not supported; supported is one of \"cls\", \"mean\", \"max\", "
                     "\"lasttoken\", \"mean_sqrt_len_tokens\", \"weightedmean\"");
}

// 1_Pooling/config.json as sentence-transformers 5.x writes it (one
// "pooling_mode_*" flag on, "word_embedding_dimension") or as 6.x does
// ("pooling_mode", "embedding_dimension"); "include_prompt" in both.
Status load_pooling(const std::string& path, int hidden_size, Pooling* out, bool* include_prompt) {
  json j;
  TESSERA_RETURN_IF_ERROR(read_json(path, &j));
  TESSERA_RETURN_IF_ERROR(get_bool(j, path, "include_prompt", include_prompt));
  const bool six = j.contains("pooling_mode");
  const char* dim_key = six ? "embedding_dimension" : "word_embedding_dimension";
  int dim = hidden_size;
  TESSERA_RETURN_IF_ERROR(get_int(j, path, dim_key, false, &dim));
  if (dim != hidden_size) {
    return invalid_argument(path + ": " + dim_key + " = " + std::to_string(dim) +
                            " but config.json hidden_size = " + std::to_string(hidden_size));
  }
  if (six) return load_pooling_mode(j, path, out);
  struct Mode {
    const char* key;
    bool supported;
    Pooling pooling;
  };
  const Mode modes[] = {
      {"pooling_mode_cls_token", true, Pooling::kCls},
      {"pooling_mode_mean_tokens", true, Pooling::kMean},
      {"pooling_mode_max_tokens", true, Pooling::kMax},
      {"pooling_mode_mean_sqrt_len_tokens", true, Pooling::kMeanSqrtLen},
      {"pooling_mode_weightedmean_tokens", true, Pooling::kWeightedMean},
      {"pooling_mode_lasttoken", true, Pooling::kLastToken},
  };
  std::vector<const Mode*> on;
  for (const Mode& m : modes) {
    bool v = false;
    TESSERA_RETURN_IF_ERROR(get_bool(j, path, m.key, &v));
    if (v) on.push_back(&m);
  }
  if (on.size() != 1 || !on[0]->supported) {
    std::string names;
    for (const Mode* m : on) names += (names.empty() ? "" : ", ") + std::string(m->key);
    return unsupported(path + ": pooling modes enabled: {" + names +
                       "}; supported is exactly one of pooling_mode_cls_token, "
                       "pooling_mode_mean_tokens, pooling_mode_max_tokens, pooling_mode_lasttoken, "
                       "pooling_mode_mean_sqrt_len_tokens, pooling_mode_weightedmean_tokens");
  }
  *out = on[0]->pooling;
  return Status::Ok();
}

// <dir>/config.json of a Dense module, as sentence-transformers 5.x and 6.x
// save it: in_features, out_features, bias, activation_function (a torch.nn
// class path; absent: Tanh, as sentence-transformers falls back to),
// module_input_name ("sentence_embedding"), use_residual.
Status load_dense(const std::string& dir, DenseModule* out) {
  const std::string path = dir + "/config.json";
  json j;
  TESSERA_RETURN_IF_ERROR(read_json(path, &j));
  DenseModule d;
  d.dir = dir;
  TESSERA_RETURN_IF_ERROR(get_int(j, path, "in_features", true, &d.in_features));
  TESSERA_RETURN_IF_ERROR(get_int(j, path, "out_features", true, &d.out_features));
  TESSERA_RETURN_IF_ERROR(get_bool(j, path, "bias", &d.bias));
  TESSERA_RETURN_IF_ERROR(get_bool(j, path, "use_residual", &d.residual));
  if (d.in_features < 1 || d.out_features < 1 || d.in_features > (1 << 20) ||
      d.out_features > (1 << 20)) {
    return invalid_argument(path + ": in_features = " + std::to_string(d.in_features) +
                            " and out_features = " + std::to_string(d.out_features) +
                            " must be in [1, 2^20]");
  }
  std::string input = "sentence_embedding";
  TESSERA_RETURN_IF_ERROR(get_string(j, path, "module_input_name", &input));
  if (input != "sentence_embedding") {
    return unsupported(path + ": module_input_name \"" + json_input::clip(input) +
                       "\" is not supported; supported: \"sentence_embedding\" (a Dense over "
                       "the pooled embedding; per-token Dense layers, as ColBERT's, are not run)");
  }
  std::string act = "torch.nn.modules.activation.Tanh";
  TESSERA_RETURN_IF_ERROR(get_string(j, path, "activation_function", &act));
  const std::string cls = act.substr(act.rfind('.') + 1);
  bool known = false;
  for (DenseActivation a :
       {DenseActivation::kIdentity, DenseActivation::kTanh, DenseActivation::kGelu,
        DenseActivation::kRelu, DenseActivation::kSigmoid, DenseActivation::kSilu}) {
    if (cls == dense_activation_name(a) && act.rfind("torch.", 0) == 0) {
      d.activation = a;
      known = true;
    }
  }
  if (!known) {
    return unsupported(path + ": activation_function \"" + json_input::clip(act) +
                       "\" is not supported; supported: torch.nn's Identity, Tanh, GELU, ReLU, "
                       "Sigmoid, SiLU");
  }
  *out = d;
  return Status::Ok();
}

// config_sentence_transformers.json: "prompts" {name: text} and
// "default_prompt_name" (null or one of them). As in sentence-transformers
// 6.3, every model has "query" and "document" prompts, empty unless the file
// gives them (so encode_query / prompt_name "query" work on any model).
Status load_prompts(const std::string& path, Prompts* out) {
  out->by_name = {{"query", ""}, {"document", ""}};
  if (!fs::exists(path)) return Status::Ok();
  json j;
  TESSERA_RETURN_IF_ERROR(read_json(path, &j));
  auto prompts = j.find("prompts");
  if (prompts != j.end() && !prompts->is_null()) {
    if (!prompts->is_object()) {
      return invalid_argument(path + ": prompts must be an object {name: text}, got " +
                              json_input::describe(*prompts));
    }
    for (const auto& [name, text] : prompts->items()) {
      if (!text.is_string()) {
        std::string what = path;
        what += ": prompts." + name + " must be a string, got " + json_input::describe(text);
        return invalid_argument(what);
      }
      out->by_name[name] = text.get<std::string>();
    }
  }
  auto def = j.find("default_prompt_name");
  if (def != j.end() && !def->is_null()) {
    if (!def->is_string() || out->by_name.count(def->get<std::string>()) == 0) {
      std::string names;
      for (const auto& [name, text] : out->by_name) names += (names.empty() ? "" : ", ") + name;
      return invalid_argument(path + ": default_prompt_name = " + json_input::render(*def) +
                              " is not one of the prompts {" + names + "}");
    }
    out->default_name = def->get<std::string>();
  }
  return Status::Ok();
}

// 1_SpladePooling/config.json: SPLADE's max over tokens of log(1 + relu).
Status load_splade_pooling(const std::string& path) {
  if (!fs::exists(path)) return Status::Ok();  // the defaults are max and relu
  json j;
  TESSERA_RETURN_IF_ERROR(read_json(path, &j));
  std::string strategy = "max", activation = "relu";
  TESSERA_RETURN_IF_ERROR(get_string(j, path, "pooling_strategy", &strategy));
  TESSERA_RETURN_IF_ERROR(get_string(j, path, "activation_function", &activation));
  if (strategy != "max" || activation != "relu") {
    return unsupported(path + ": pooling_strategy \"" + json_input::clip(strategy) +
                       "\" with activation_function \"" + json_input::clip(activation) +
                       "\" is not supported; supported: \"max\" with \"relu\"");
  }
  return Status::Ok();
}

}  // namespace

const char* dense_activation_name(DenseActivation a) {
  switch (a) {
    case DenseActivation::kIdentity:
      return "Identity";
    case DenseActivation::kTanh:
      return "Tanh";
    case DenseActivation::kGelu:
      return "GELU";
    case DenseActivation::kRelu:
      return "ReLU";
    case DenseActivation::kSigmoid:
      return "Sigmoid";
    case DenseActivation::kSilu:
      return "SiLU";
  }
  return "?";
}

const char* pooling_name(Pooling p) {
  switch (p) {
    case Pooling::kCls:
      return "cls";
    case Pooling::kMean:
      return "mean";
    case Pooling::kMax:
      return "max";
    case Pooling::kLastToken:
      return "lasttoken";
    case Pooling::kMeanSqrtLen:
      return "mean_sqrt_len_tokens";
    case Pooling::kWeightedMean:
      return "weightedmean";
  }
  return "?";
}

const char* block_kind_name(BlockKind k) {
  return k == BlockKind::kPreNorm ? "pre-norm" : "post-norm";
}

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::kGelu:
      return "gelu";
    case Activation::kGeluTanh:
      return "gelu (tanh)";
    case Activation::kSilu:
      return "silu";
  }
  return "?";
}

const char* head_kind_name(HeadKind k) {
  switch (k) {
    case HeadKind::kNone:
      return "none (embedding)";
    case HeadKind::kSequenceClassification:
      return "sequence classification";
    case HeadKind::kMaskedLm:
      return "masked LM (SPLADE)";
  }
  return "?";
}

Status load_network_config(const std::string& path, NetworkConfig* out) {
  json j;
  TESSERA_RETURN_IF_ERROR(read_json(path, &j));
  NetworkConfig c;
  TESSERA_RETURN_IF_ERROR(get_string(j, path, "model_type", &c.model_type));
  c.architecture = find_architecture(c.model_type);
  if (c.architecture == nullptr) {
    return unsupported(path + ": model_type \"" + json_input::clip(c.model_type) +
                       "\" is not supported; supported: " + supported_architectures());
  }
  // The names after '|' are other configs' (NomicBERT's remote-code n_embd,
  // DistilBERT's dim / n_heads / n_layers / hidden_dim, ...).
  TESSERA_RETURN_IF_ERROR(get_int(j, path, "vocab_size", true, &c.vocab_size));
  TESSERA_RETURN_IF_ERROR(get_int(j, path, "hidden_size|n_embd|dim", true, &c.hidden_size));
  TESSERA_RETURN_IF_ERROR(
      get_int(j, path, "num_attention_heads|n_head|n_heads", true, &c.num_attention_heads));
  TESSERA_RETURN_IF_ERROR(
      get_int(j, path, "num_hidden_layers|n_layer|n_layers", true, &c.num_hidden_layers));
  c.intermediate_size = 4 * c.hidden_size;  // GPT-2-style configs' n_inner: null
  TESSERA_RETURN_IF_ERROR(
      get_int(j, path, "intermediate_size|n_inner|hidden_dim", false, &c.intermediate_size));
  TESSERA_RETURN_IF_ERROR(
      get_int(j, path, "max_position_embeddings|n_positions", true, &c.max_position_embeddings));
  TESSERA_RETURN_IF_ERROR(get_int(j, path, "head_dim", false, &c.explicit_head_dim));
  TESSERA_RETURN_IF_ERROR(get_int(j, path, "num_key_value_heads", false, &c.num_key_value_heads));
  TESSERA_RETURN_IF_ERROR(config_fields::get_epsilon(j, path, "layer_norm_eps", &c.layer_norm_eps));
  c.hidden_act = "gelu";
  TESSERA_RETURN_IF_ERROR(get_string(j, path, "hidden_act", &c.hidden_act));
  TESSERA_RETURN_IF_ERROR(read_head(j, path, &c));
  TESSERA_RETURN_IF_ERROR(c.architecture->read_config(j, path, &c));
  TESSERA_RETURN_IF_ERROR(check_shape(path, c));
  if (c.max_tokens() < 2) {
    return invalid_argument(
        path + ": max_position_embeddings = " + std::to_string(c.max_position_embeddings) +
        " leaves " + std::to_string(c.max_tokens()) + " positions after the offset of " +
        std::to_string(c.position_offset) + " (padding_idx + 1)");
  }
  *out = c;
  return Status::Ok();
}

Status load_model_config(const std::string& model_dir, ModelConfig* out) {
  if (!fs::is_directory(model_dir)) {
    return not_found(model_dir + ": model directory does not exist");
  }
  ModelConfig c;
  c.transformer_dir = model_dir;
  std::string pooling_dir, splade_dir;
  const std::string modules_path = model_dir + "/modules.json";
  const bool sentence_transformers = fs::exists(modules_path);
  if (sentence_transformers) {
    json modules;
    TESSERA_RETURN_IF_ERROR(json_input::parse_file(modules_path, &modules));
    if (!modules.is_array()) return invalid_argument(modules_path + ": expected a JSON array");
    bool have_transformer = false;
    for (const json& m : modules) {
      std::string type, sub;
      if (!m.is_object()) {
        return invalid_argument(modules_path + ": module " + json_input::render(m) +
                                " is not an object");
      }
      TESSERA_RETURN_IF_ERROR(get_string(m, modules_path, "type", &type));
      TESSERA_RETURN_IF_ERROR(get_string(m, modules_path, "path", &sub));
      std::string dir = model_dir;
      if (!sub.empty()) dir += "/" + sub;
      const std::string kind = module_class(type);
      const bool transformer = kind == "Transformer" || kind == "MLMTransformer";
      if (transformer && !have_transformer) {
        have_transformer = true;
        c.transformer_dir = dir;
      } else if (kind == "Pooling" && pooling_dir.empty()) {
        pooling_dir = dir;
      } else if (kind == "Dense" && !pooling_dir.empty() && !c.normalize) {
        DenseModule d;
        TESSERA_RETURN_IF_ERROR(load_dense(dir, &d));
        c.dense.push_back(d);
      } else if (kind == "Normalize") {
        c.normalize = true;
      } else if (kind == "SpladePooling" && splade_dir.empty()) {
        splade_dir = dir;
      } else {
        // The type whole (bounded: a hostile file's string is clipped, a
        // real module path never is), so the refusal names what it refuses.
        const std::string name = m.contains("name") && m["name"].is_string()
                                     ? m["name"].get<std::string>()
                                     : std::string("?");
        return unsupported(
            modules_path + ": module '" + json_input::clip(name, 64) + "' of type '" +
            json_input::clip(type, 256) + "'" +
            (transformer || kind == "Pooling" || kind == "SpladePooling" ? " (a second one)"
             : kind == "Dense" ? (pooling_dir.empty() ? " (before Pooling)" : " (after Normalize)")
                               : "") +
            " is not supported; supported: " + kSupportedModules);
      }
    }
    if (!have_transformer) {
      return unsupported(modules_path +
                         ": no Transformer module (sentence_transformers' models.Transformer or "
                         "base.modules.transformer.Transformer)");
    }
  }
  TESSERA_RETURN_IF_ERROR(load_network_config(c.transformer_dir + "/config.json", &c.network));
  if (!pooling_dir.empty()) {
    TESSERA_RETURN_IF_ERROR(load_pooling(pooling_dir + "/config.json", c.network.hidden_size,
                                         &c.pooling, &c.prompts.pooled));
  } else if (c.network.head == HeadKind::kSequenceClassification) {
    c.pooling = Pooling::kCls;  // what the classifier reads
  }
  // A sentence-transformers Pooling module makes an embedding model whatever
  // class config.json names: all-mpnet-base-v2 says MPNetForMaskedLM but
  // ships no LM head.
  if (!pooling_dir.empty() && c.network.head == HeadKind::kMaskedLm) {
    c.network.head = HeadKind::kNone;
  }
  const Architecture& arch = *c.network.architecture;
  if (!arch.runs_head(c.network.head)) {
    const bool some_head =
        arch.runs_head(HeadKind::kSequenceClassification) || arch.runs_head(HeadKind::kMaskedLm);
    return unsupported(c.transformer_dir + "/config.json: architectures names a " +
                       head_kind_name(c.network.head) + " model; " + arch.name() +
                       (some_head
                            ? std::string(" runs no ") + head_kind_name(c.network.head) + " head"
                            : std::string(" runs as an embedding model only (a *Model "
                                          "class with a sentence-transformers Pooling "
                                          "module)")));
  }
  if (!splade_dir.empty()) {
    TESSERA_RETURN_IF_ERROR(load_splade_pooling(splade_dir + "/config.json"));
  }
  // Each Dense takes what the one before gives (the first, the pooled
  // embedding); only embedding models pool into them.
  int width = c.network.hidden_size;
  for (const DenseModule& d : c.dense) {
    if (c.network.head != HeadKind::kNone) {
      return unsupported(d.dir + ": a Dense module on a " + head_kind_name(c.network.head) +
                         " model is not supported (only after an embedding model's Pooling)");
    }
    if (d.in_features != width) {
      return invalid_argument(d.dir +
                              "/config.json: in_features = " + std::to_string(d.in_features) +
                              " but the module before gives " + std::to_string(width) + " values");
    }
    width = d.out_features;
  }
  c.sparse = c.network.head == HeadKind::kMaskedLm;
  if (!splade_dir.empty() && !c.sparse) {
    return unsupported(modules_path + ": SpladePooling needs a masked-LM checkpoint; " +
                       c.transformer_dir + "/config.json architectures name no *ForMaskedLM");
  }
  c.max_seq_length = c.network.max_tokens();
  const std::string sbert_path = c.transformer_dir + "/sentence_bert_config.json";
  json sbert;
  if (fs::exists(sbert_path)) TESSERA_RETURN_IF_ERROR(read_json(sbert_path, &sbert));
  if (sentence_transformers && !sbert.contains("max_seq_length")) {
    // sentence-transformers 6 keeps the length in the tokenizer's
    // model_max_length (tokenizer_config.json), as it reads it back; HF's
    // "no limit" sentinel (1e30) and anything past the positions leave the
    // positions as the limit.
    const std::string tok_path = c.transformer_dir + "/tokenizer_config.json";
    if (fs::exists(tok_path)) {
      json t;
      TESSERA_RETURN_IF_ERROR(read_json(tok_path, &t));
      const auto it = t.find("model_max_length");
      if (it != t.end() && it->is_number_integer() && it->get<int64_t>() > 0 &&
          it->get<int64_t>() <= c.network.max_tokens()) {
        c.max_seq_length = static_cast<int>(it->get<int64_t>());
      }
    }
  }
  if (sbert.is_object()) {
    TESSERA_RETURN_IF_ERROR(get_int(sbert, sbert_path, "max_seq_length", false, &c.max_seq_length));
    if (c.max_seq_length > c.network.max_tokens()) {
      return invalid_argument(sbert_path +
                              ": max_seq_length = " + std::to_string(c.max_seq_length) +
                              " exceeds the " + std::to_string(c.network.max_tokens()) +
                              " positions of config.json (max_position_embeddings = " +
                              std::to_string(c.network.max_position_embeddings) + ")");
    }
  }
  TESSERA_RETURN_IF_ERROR(
      load_prompts(model_dir + "/config_sentence_transformers.json", &c.prompts));
  if (const std::string tok_path = c.transformer_dir + "/tokenizer_config.json";
      fs::exists(tok_path)) {
    json t;
    TESSERA_RETURN_IF_ERROR(read_json(tok_path, &t));
    const auto names = t.find("model_input_names");
    if (names != t.end() && names->is_array()) {
      c.token_type_ids = std::find(names->begin(), names->end(), "token_type_ids") != names->end();
    }
  }
  // One file, else a sharded checkpoint's index (every model over ~1B
  // parameters ships sharded).
  c.weights_path = c.transformer_dir + "/model.safetensors";
  if (!fs::exists(c.weights_path) && fs::exists(c.weights_path + ".index.json")) {
    c.weights_path += ".index.json";
  }
  if (!fs::exists(c.weights_path)) {
    return not_found(c.weights_path +
                     ": missing, and no model.safetensors.index.json (tessera reads safetensors "
                     "weights only)");
  }
  *out = c;
  return Status::Ok();
}

}  // namespace tessera::model
