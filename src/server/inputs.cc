#include "server/inputs.h"

namespace tessera::server {

namespace {

constexpr size_t kSpecialTokens = 2;  // [CLS] and [SEP]

ApiError tokenizer_error(const std::string& name, const Status& s) {
  return validation_error(name, name + ": the tokenizer refused this text: " + s.message());
}

}  // namespace

ApiError prepare_inputs(const ServedModel& model, const std::vector<std::string>& texts,
                        bool truncate, const std::string& field, const char* truncate_hint,
                        PreparedInputs* out) {
  const size_t max_length = static_cast<size_t>(model.info().max_length);
  out->sequences.clear();
  out->sequences.reserve(texts.size());
  out->tokens = 0;
  std::vector<TextToken> tokens;
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string name =
        texts.size() == 1 ? field : field + "[" + std::to_string(i) + "]";
    tokens.clear();
    Status s = model.tokenize(texts[i], &tokens);
    if (!s.ok()) return tokenizer_error(name, s);
    size_t keep = tokens.size();
    if (keep + kSpecialTokens > max_length) {
      if (!truncate) {
        return validation_error(
            name, name + " has " + std::to_string(keep + kSpecialTokens) +
                      " tokens ([CLS] and [SEP] included) but the model takes at most " +
                      std::to_string(max_length) +
                      " (max_length); " + truncate_hint);
      }
      keep = max_length - kSpecialTokens;
    }
    std::vector<int32_t> ids;
    ids.reserve(keep + kSpecialTokens);
    ids.push_back(model.cls_id());
    for (size_t t = 0; t < keep; ++t) ids.push_back(tokens[t].id);
    ids.push_back(model.sep_id());
    out->tokens += static_cast<int64_t>(ids.size());
    out->sequences.push_back(std::move(ids));
  }
  return no_error();
}

ApiError tokenize_text(const ServedModel& model, const std::string& text,
                       bool add_special_tokens, const std::string& field,
                       std::vector<TextToken>* out) {
  out->clear();
  if (add_special_tokens) out->push_back({model.cls_id(), -1, -1});
  std::vector<TextToken> tokens;
  Status s = model.tokenize(text, &tokens);
  if (!s.ok()) return tokenizer_error(field, s);
  out->insert(out->end(), tokens.begin(), tokens.end());
  if (add_special_tokens) out->push_back({model.sep_id(), -1, -1});
  return no_error();
}

}  // namespace tessera::server
