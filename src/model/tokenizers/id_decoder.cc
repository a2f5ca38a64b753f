#include "model/tokenizers/id_decoder.h"

namespace tessera::model::tokenizers {

void IdDecoder::set_token(int32_t id, std::string text, bool special) {
  if (id < 0) return;
  const size_t i = static_cast<size_t>(id);
  if (i >= tokens_.size()) {
    tokens_.resize(i + 1);
    kinds_.resize(i + 1, kNone);
  }
  tokens_[i] = std::move(text);
  kinds_[i] = special ? kSpecial : kToken;
}

Status IdDecoder::decode(const std::vector<int64_t>& ids, bool skip_special_tokens,
                         std::string* out, size_t* bad_position) const {
  out->clear();
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (size_t p = 0; p < ids.size(); ++p) {
    const int64_t id = ids[p];
    if (id < 0 || id >= id_limit() || kinds_[static_cast<size_t>(id)] == kNone) {
      *bad_position = p;
      return invalid_argument("token id " + std::to_string(id) +
                              " is not in the vocabulary (ids are below " +
                              std::to_string(id_limit()) + ")");
    }
    if (skip_special_tokens && kinds_[static_cast<size_t>(id)] == kSpecial) continue;
    tokens.push_back(tokens_[static_cast<size_t>(id)]);
  }
  return decoder_.decode(std::move(tokens), out);
}

}  // namespace tessera::model::tokenizers
