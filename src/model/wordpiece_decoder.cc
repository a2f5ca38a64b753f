#include "model/wordpiece_decoder.h"

#include <string_view>
#include <utility>

namespace tessera::model {

namespace {

void replace_all(std::string* s, std::string_view from, std::string_view to) {
  size_t at = 0;
  while ((at = s->find(from, at)) != std::string::npos) {
    s->replace(at, from.size(), to);
    at += to.size();
  }
}

}  // namespace

void wordpiece_cleanup(std::string* piece) {
  // HF's list, in HF's order (an earlier rule's output can feed a later one).
  static constexpr std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},   {" ?", "?"},     {" !", "!"},    {" ,", ","},
      {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},  {" do not", " don't"},
      {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) replace_all(piece, from, to);
}

void WordPieceDecoder::set_token(int32_t id, std::string text, bool special) {
  if (id < 0) return;
  const size_t i = static_cast<size_t>(id);
  if (i >= tokens_.size()) {
    tokens_.resize(i + 1);
    kinds_.resize(i + 1, kNone);
  }
  tokens_[i] = std::move(text);
  kinds_[i] = special ? kSpecial : kToken;
}

Status WordPieceDecoder::decode(const std::vector<int64_t>& ids, bool skip_special_tokens,
                                std::string* out, size_t* bad_position) const {
  out->clear();
  const bool wordpiece = options_.type == "WordPiece";
  if (!wordpiece && !options_.type.empty()) {
    return unsupported("the tokenizer's decoder is \"" + options_.type +
                       "\"; tessera decodes with \"WordPiece\" or no decoder");
  }
  bool first = true;
  std::string piece;
  for (size_t p = 0; p < ids.size(); ++p) {
    const int64_t id = ids[p];
    if (id < 0 || id >= id_limit() || kinds_[static_cast<size_t>(id)] == kNone) {
      *bad_position = p;
      return invalid_argument("token id " + std::to_string(id) +
                              " is not in the vocabulary (ids are below " +
                              std::to_string(id_limit()) + ")");
    }
    if (skip_special_tokens && kinds_[static_cast<size_t>(id)] == kSpecial) continue;
    const std::string& token = tokens_[static_cast<size_t>(id)];
    if (first || !wordpiece) {
      piece = first ? token : " " + token;
    } else if (!options_.prefix.empty() && token.starts_with(options_.prefix)) {
      piece = token.substr(options_.prefix.size());
    } else {
      piece = " " + token;
    }
    first = false;
    if (wordpiece && options_.cleanup) wordpiece_cleanup(&piece);
    out->append(piece);
  }
  return Status::Ok();
}

}  // namespace tessera::model
