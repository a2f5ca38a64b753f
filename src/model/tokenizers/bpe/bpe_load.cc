// Reading a BPE tokenizer.json model: vocab (token -> id), merges ("a b"
// strings or [a, b] pairs), and the options of HF's BPE.
#include <nlohmann/json.hpp>

#include "model/tokenizers/bpe/bpe_model.h"
#include "model/tokenizers/bpe/bpe_type.h"
#include "runtime/json_input.h"

namespace tessera::model::tokenizers {
namespace {

using nlohmann::json;

Status optional_string(const JsonFields& f, const json& model, const char* key,
                       std::optional<std::string>* out) {
  const auto it = model.find(key);
  if (it == model.end() || it->is_null()) return Status::Ok();
  if (!it->is_string()) {
    return f.error(std::string("model.") + key,
                   "must be a string or null, not " + json_input::render(*it));
  }
  *out = it->get<std::string>();
  return Status::Ok();
}

Status read_merges(const JsonFields& f, const json& model,
                   std::vector<std::pair<std::string, std::string>>* out) {
  const auto merges = model.find("merges");
  if (merges == model.end() || !merges->is_array()) {
    return f.error("model.merges", "must be an array of merges");
  }
  out->reserve(merges->size());
  for (size_t i = 0; i < merges->size(); ++i) {
    const json& m = (*merges)[i];
    const std::string field = "model.merges[" + std::to_string(i) + "]";
    if (m.is_string()) {
      // The older form: "a b", split at the first space.
      const std::string s = m.get<std::string>();
      const size_t space = s.find(' ');
      if (space == std::string::npos) {
        return f.error(field,
                       "must be \"a b\" (two tokens and a space), not " + json_input::render(m));
      }
      out->emplace_back(s.substr(0, space), s.substr(space + 1));
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      out->emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else {
      return f.error(field, "must be [\"a\", \"b\"] or \"a b\", not " + json_input::render(m));
    }
  }
  return Status::Ok();
}

Status load_bpe(const LoadContext& ctx, std::unique_ptr<TokenizerModel>* out) {
  const JsonFields& f = ctx.fields;
  const json& model = ctx.root["model"];
  const auto v = model.find("vocab");
  if (v == model.end() || !v->is_object()) {
    return f.error("model.vocab", "must be an object mapping tokens to ids");
  }
  std::vector<std::pair<std::string, int32_t>> vocab;
  vocab.reserve(v->size());
  for (const auto& [token, id] : v->items()) {
    int32_t value = 0;
    TESSERA_RETURN_IF_ERROR(
        f.get_id(id, "model.vocab[\"" + json_input::clip(token) + "\"]", &value));
    vocab.emplace_back(token, value);
  }
  std::vector<std::pair<std::string, std::string>> merges;
  TESSERA_RETURN_IF_ERROR(read_merges(f, model, &merges));
  BpeOptions options;
  TESSERA_RETURN_IF_ERROR(optional_string(f, model, "unk_token", &options.unk_token));
  std::optional<std::string> prefix, suffix;
  TESSERA_RETURN_IF_ERROR(optional_string(f, model, "continuing_subword_prefix", &prefix));
  TESSERA_RETURN_IF_ERROR(optional_string(f, model, "end_of_word_suffix", &suffix));
  options.continuing_subword_prefix = prefix.value_or("");
  options.end_of_word_suffix = suffix.value_or("");
  for (const auto& [key, flag] : {std::pair{"fuse_unk", &options.fuse_unk},
                                  std::pair{"byte_fallback", &options.byte_fallback},
                                  std::pair{"ignore_merges", &options.ignore_merges}}) {
    const auto it = model.find(key);
    if (it != model.end() && it->is_null()) continue;
    TESSERA_RETURN_IF_ERROR(f.get_bool(model, "model.", key, flag));
  }
  if (const auto d = model.find("dropout"); d != model.end() && !d->is_null()) {
    if (!d->is_number() || d->get<double>() != 0.0) {
      return f.unsupported_value("model.dropout", *d,
                                 "null or 0 (dropout makes tokenization random)");
    }
  }
  std::unique_ptr<const WordModel> bpe;
  TESSERA_RETURN_IF_ERROR(
      BpeModel::create(std::move(vocab), merges, std::move(options), f.path(), &bpe));
  return PipelineTokenizer::create(ctx, std::move(bpe), out);
}

}  // namespace

const TokenizerType& bpe_tokenizer_type() {
  static const TokenizerType type{"BPE", &load_bpe};
  return type;
}

}  // namespace tessera::model::tokenizers
