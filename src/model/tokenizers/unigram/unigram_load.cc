// Reading a Unigram tokenizer.json model: vocab ([piece, score] in id
// order), unk_id, byte_fallback.
#include <cmath>
#include <nlohmann/json.hpp>

#include "model/tokenizers/unigram/unigram_model.h"
#include "model/tokenizers/unigram/unigram_type.h"
#include "runtime/json_input.h"

namespace tessera::model::tokenizers {
namespace {

using nlohmann::json;

Status load_unigram(const LoadContext& ctx, std::unique_ptr<TokenizerModel>* out) {
  const JsonFields& f = ctx.fields;
  const json& model = ctx.root["model"];
  const auto v = model.find("vocab");
  if (v == model.end() || !v->is_array()) {
    return f.error("model.vocab", "must be an array of [piece, score]");
  }
  std::vector<std::pair<std::string, double>> pieces;
  pieces.reserve(v->size());
  for (size_t i = 0; i < v->size(); ++i) {
    const json& e = (*v)[i];
    if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number() ||
        !std::isfinite(e[1].get<double>())) {
      return f.error("model.vocab[" + std::to_string(i) + "]",
                     "must be [piece, finite score], not " + json_input::render(e));
    }
    pieces.emplace_back(e[0].get<std::string>(), e[1].get<double>());
  }
  std::optional<int32_t> unk_id;
  if (const auto u = model.find("unk_id"); u != model.end() && !u->is_null()) {
    int32_t id = 0;
    TESSERA_RETURN_IF_ERROR(f.get_id(*u, "model.unk_id", &id));
    unk_id = id;
  }
  bool byte_fallback = false;
  TESSERA_RETURN_IF_ERROR(f.get_bool(model, "model.", "byte_fallback", &byte_fallback));
  if (!unk_id && !byte_fallback) {
    return f.unsupported_field("model.unk_id",
                               "is null; tessera needs an unknown piece (or byte_fallback) for "
                               "text the vocabulary does not cover");
  }
  std::unique_ptr<const WordModel> unigram;
  TESSERA_RETURN_IF_ERROR(
      UnigramModel::create(std::move(pieces), unk_id, byte_fallback, f.path(), &unigram));
  return PipelineTokenizer::create(ctx, std::move(unigram), out);
}

}  // namespace

const TokenizerType& unigram_tokenizer_type() {
  static const TokenizerType type{"Unigram", &load_unigram};
  return type;
}

}  // namespace tessera::model::tokenizers
