#include "model/tokenizer_files.h"

#include <filesystem>

#include "runtime/json_input.h"
#include "runtime/regular_file.h"

namespace tessera::model {

using nlohmann::json;
using tokenizers::JsonFields;
using tokenizers::TokenizerType;

namespace {

std::string supported_types() {
  std::string s;
  for (const TokenizerType* t : tokenizers::builtin_tokenizer_types()) {
    s += (s.empty() ? "\"" : ", \"") + std::string(t->model_type) + "\"";
  }
  return s.empty() ? "none (this build has no tokenizer folder)" : s;
}

}  // namespace

Status read_tokenizer_source(const std::string& model_dir, TokenizerSource* out) {
  namespace fs = std::filesystem;
  const std::string json_path = (fs::path(model_dir) / "tokenizer.json").string();
  std::error_code ec;
  TokenizerSource src;
  if (fs::exists(json_path, ec)) {
    src.path = json_path;
    std::string text;
    TESSERA_RETURN_IF_ERROR(read_regular_file(json_path, json_input::kMaxFileBytes, &text));
    TESSERA_RETURN_IF_ERROR(json_input::parse(text, json_path, &src.root));
    const JsonFields f(json_path);
    if (!src.root.is_object()) return f.error("the top level", "must be a JSON object");
    const auto model = src.root.find("model");
    if (model == src.root.end()) return f.error("model", "is missing");
    if (!model->is_object()) return f.error("model", "must be an object");
    const std::string type = JsonFields::type_of(*model);
    for (const TokenizerType* t : tokenizers::builtin_tokenizer_types()) {
      if (type == t->model_type) src.type = t;
    }
    if (src.type == nullptr) {
      const auto it = model->find("type");
      return f.unsupported_value("model.type", it == model->end() ? json() : *it,
                                 supported_types());
    }
    *out = std::move(src);
    return Status::Ok();
  }
  std::string tried = "tokenizer.json";
  for (const TokenizerType* t : tokenizers::builtin_tokenizer_types()) {
    if (t->fallback_file == nullptr) continue;
    tried += std::string(" nor ") + t->fallback_file;
    const std::string path = (fs::path(model_dir) / t->fallback_file).string();
    if (!fs::exists(path, ec)) continue;
    src.path = path;
    src.type = t;
    TESSERA_RETURN_IF_ERROR(t->convert(path, &src.root));
    *out = std::move(src);
    return Status::Ok();
  }
  return not_found("no tokenizer in " + model_dir + ": neither " + tried);
}

Status read_added_tokens(const JsonFields& f, const json& root, std::vector<AddedToken>* out) {
  const auto it = root.find("added_tokens");
  if (it == root.end() || it->is_null()) return Status::Ok();
  if (!it->is_array()) return f.error("added_tokens", "must be an array");
  for (size_t i = 0; i < it->size(); ++i) {
    const json& t = (*it)[i];
    const std::string field = "added_tokens[" + std::to_string(i) + "]";
    if (!t.is_object() || !t.contains("id") || !t.contains("content")) {
      return f.error(field, "must be an object with id and content");
    }
    AddedToken token;
    TESSERA_RETURN_IF_ERROR(f.get_id(t["id"], field + ".id", &token.id));
    TESSERA_RETURN_IF_ERROR(f.get_string(t, field + ".", "content", &token.content));
    TESSERA_RETURN_IF_ERROR(f.get_bool(t, field + ".", "single_word", &token.single_word));
    TESSERA_RETURN_IF_ERROR(f.get_bool(t, field + ".", "lstrip", &token.lstrip));
    TESSERA_RETURN_IF_ERROR(f.get_bool(t, field + ".", "rstrip", &token.rstrip));
    TESSERA_RETURN_IF_ERROR(f.get_bool(t, field + ".", "special", &token.special));
    // HF's default for a token that does not say: normalized unless special.
    token.normalized = !token.special;
    TESSERA_RETURN_IF_ERROR(f.get_bool(t, field + ".", "normalized", &token.normalized));
    out->push_back(std::move(token));
  }
  return Status::Ok();
}

Status read_pad_id(const JsonFields& f, const json& root, std::optional<int32_t>* out) {
  const auto pad = root.find("padding");
  if (pad == root.end() || !pad->is_object() || !pad->contains("pad_id")) return Status::Ok();
  int32_t id = 0;
  TESSERA_RETURN_IF_ERROR(f.get_id((*pad)["pad_id"], "padding.pad_id", &id));
  *out = id;
  return Status::Ok();
}

}  // namespace tessera::model
