#include "model/config.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "runtime/json_input.h"

namespace tessera::model {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kSupportedTypes = "model_type \"bert\" (BertModel, BertForMaskedLM, ...)";
constexpr const char* kSupportedActs = "\"gelu\" (exact erf)";
constexpr const char* kSupportedModules =
    "sentence_transformers.models.Transformer, .Pooling (cls / mean / max), .Normalize";

Status read_json(const std::string& path, json* out) {
  TESSERA_RETURN_IF_ERROR(json_input::parse_file(path, out));
  if (!out->is_object()) return invalid_argument(path + ": expected a JSON object");
  return Status::Ok();
}

// A positive integer field; `required` false keeps *out when absent.
Status get_int(const json& j, const std::string& path, const char* key, bool required, int* out) {
  const auto it = j.find(key);
  if (it == j.end()) {
    return required ? invalid_argument(path + ": missing field '" + key + "'") : Status::Ok();
  }
  if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > (1 << 30)) {
    return invalid_argument(path + ": field '" + key + "' = " + json_input::render(*it) +
                            " must be a positive integer");
  }
  *out = it->get<int>();
  return Status::Ok();
}

// A string field; absent keeps *out.
Status get_string(const json& j, const std::string& path, const char* key, std::string* out) {
  const auto it = j.find(key);
  if (it == j.end()) return Status::Ok();
  if (!it->is_string()) {
    return invalid_argument(path + ": field '" + key + "' = " + json_input::render(*it) +
                            " must be a string");
  }
  *out = it->get<std::string>();
  return Status::Ok();
}

Status get_bool(const json& j, const std::string& path, const char* key, bool* out) {
  const auto it = j.find(key);
  if (it == j.end()) return Status::Ok();
  if (!it->is_boolean()) {
    return invalid_argument(path + ": field '" + key + "' = " + json_input::render(*it) +
                            " must be a boolean");
  }
  *out = it->get<bool>();
  return Status::Ok();
}

Status load_pooling(const std::string& path, int hidden_size, Pooling* out) {
  json j;
  TESSERA_RETURN_IF_ERROR(read_json(path, &j));
  int dim = hidden_size;
  TESSERA_RETURN_IF_ERROR(get_int(j, path, "word_embedding_dimension", false, &dim));
  if (dim != hidden_size) {
    return invalid_argument(path + ": word_embedding_dimension = " + std::to_string(dim) +
                            " but config.json hidden_size = " + std::to_string(hidden_size));
  }
  struct Mode {
    const char* key;
    bool supported;
    Pooling pooling;
  };
  const Mode modes[] = {
      {"pooling_mode_cls_token", true, Pooling::kCls},
      {"pooling_mode_mean_tokens", true, Pooling::kMean},
      {"pooling_mode_max_tokens", true, Pooling::kMax},
      {"pooling_mode_mean_sqrt_len_tokens", false, Pooling::kMean},
      {"pooling_mode_weightedmean_tokens", false, Pooling::kMean},
      {"pooling_mode_lasttoken", false, Pooling::kMean},
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
                       "pooling_mode_mean_tokens, pooling_mode_max_tokens");
  }
  *out = on[0]->pooling;
  return Status::Ok();
}

}  // namespace

const char* pooling_name(Pooling p) {
  switch (p) {
    case Pooling::kCls:
      return "cls";
    case Pooling::kMean:
      return "mean";
    case Pooling::kMax:
      return "max";
  }
  return "?";
}

Status load_bert_config(const std::string& path, BertConfig* out) {
  json j;
  TESSERA_RETURN_IF_ERROR(read_json(path, &j));
  BertConfig c;
  TESSERA_RETURN_IF_ERROR(get_string(j, path, "model_type", &c.model_type));
  if (c.model_type != "bert") {
    return unsupported(path + ": model_type \"" + json_input::clip(c.model_type) +
                       "\" is not supported; supported: " + kSupportedTypes);
  }
  std::string pos_type = "absolute";
  TESSERA_RETURN_IF_ERROR(get_string(j, path, "position_embedding_type", &pos_type));
  if (pos_type != "absolute") {
    return unsupported(path + ": position_embedding_type \"" + json_input::clip(pos_type) +
                       "\" is not supported; supported: \"absolute\"");
  }
  TESSERA_RETURN_IF_ERROR(get_int(j, path, "vocab_size", true, &c.vocab_size));
  TESSERA_RETURN_IF_ERROR(get_int(j, path, "hidden_size", true, &c.hidden_size));
  TESSERA_RETURN_IF_ERROR(get_int(j, path, "num_attention_heads", true, &c.num_attention_heads));
  TESSERA_RETURN_IF_ERROR(get_int(j, path, "num_hidden_layers", true, &c.num_hidden_layers));
  TESSERA_RETURN_IF_ERROR(get_int(j, path, "intermediate_size", true, &c.intermediate_size));
  TESSERA_RETURN_IF_ERROR(
      get_int(j, path, "max_position_embeddings", true, &c.max_position_embeddings));
  c.type_vocab_size = 2;
  TESSERA_RETURN_IF_ERROR(get_int(j, path, "type_vocab_size", false, &c.type_vocab_size));
  if (c.hidden_size % c.num_attention_heads != 0) {
    return invalid_argument(
        path + ": hidden_size = " + std::to_string(c.hidden_size) +
        " is not a multiple of num_attention_heads = " + std::to_string(c.num_attention_heads));
  }
  const auto eps = j.find("layer_norm_eps");
  if (eps != j.end()) {
    if (!eps->is_number() || eps->get<double>() <= 0 || eps->get<double>() > 1) {
      return invalid_argument(path + ": layer_norm_eps = " + json_input::render(*eps) +
                              " must be in (0, 1]");
    }
    c.layer_norm_eps = eps->get<float>();
  }
  c.hidden_act = "gelu";
  TESSERA_RETURN_IF_ERROR(get_string(j, path, "hidden_act", &c.hidden_act));
  if (c.hidden_act != "gelu") {
    return unsupported(path + ": hidden_act \"" + c.hidden_act +
                       "\" is not supported; supported: " + kSupportedActs);
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
  std::string pooling_dir;
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
      if (type == "sentence_transformers.models.Transformer" && !have_transformer) {
        have_transformer = true;
        c.transformer_dir = dir;
      } else if (type == "sentence_transformers.models.Pooling" && pooling_dir.empty()) {
        pooling_dir = dir;
      } else if (type == "sentence_transformers.models.Normalize") {
        c.normalize = true;
      } else {
        return unsupported(modules_path + ": module " + json_input::render(m) +
                           " is not supported; supported: " + kSupportedModules);
      }
    }
    if (!have_transformer) {
      return unsupported(modules_path + ": no sentence_transformers.models.Transformer module");
    }
  }
  TESSERA_RETURN_IF_ERROR(load_bert_config(c.transformer_dir + "/config.json", &c.bert));
  if (!pooling_dir.empty()) {
    TESSERA_RETURN_IF_ERROR(
        load_pooling(pooling_dir + "/config.json", c.bert.hidden_size, &c.pooling));
  }
  c.max_seq_length = c.bert.max_position_embeddings;
  const std::string sbert_path = c.transformer_dir + "/sentence_bert_config.json";
  if (fs::exists(sbert_path)) {
    json j;
    TESSERA_RETURN_IF_ERROR(read_json(sbert_path, &j));
    TESSERA_RETURN_IF_ERROR(get_int(j, sbert_path, "max_seq_length", false, &c.max_seq_length));
    if (c.max_seq_length > c.bert.max_position_embeddings) {
      return invalid_argument(sbert_path +
                              ": max_seq_length = " + std::to_string(c.max_seq_length) +
                              " exceeds config.json max_position_embeddings = " +
                              std::to_string(c.bert.max_position_embeddings));
    }
  }
  c.weights_path = c.transformer_dir + "/model.safetensors";
  if (!fs::exists(c.weights_path)) {
    return not_found(c.weights_path + ": missing (tessera reads safetensors weights only)");
  }
  *out = c;
  return Status::Ok();
}

}  // namespace tessera::model
