#include "model/tokenizer.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "model/tokenizer_files.h"
#include "model/tokenizer_utf8.h"
#include "runtime/json_input.h"

namespace tessera::model {

using tokenizers::JsonFields;

namespace {

Status check_utf8(std::string_view text) {
  if (const size_t bad = find_invalid_utf8(text); bad != text.size()) {
    char byte[8];
    std::snprintf(byte, sizeof(byte), "0x%02X", static_cast<unsigned char>(text[bad]));
    return invalid_argument("text is not valid UTF-8 at byte offset " + std::to_string(bad) +
                            " (byte " + byte + ")");
  }
  return Status::Ok();
}

Status no_room(const char* what, size_t max_length, size_t specials) {
  return invalid_argument(std::string(what) + ": max_length = " + std::to_string(max_length) +
                          " leaves no room for the " + std::to_string(specials) +
                          " special tokens (needs >= " + std::to_string(specials) + ")");
}

// HF's longest_first truncation of a pair to `budget` tokens.
void truncate_longest_first(size_t budget, std::vector<TokenSpan>* a, std::vector<TokenSpan>* b) {
  size_t n1 = a->size(), n2 = b->size();
  if (n1 + n2 <= budget) return;
  const bool swap = n1 > n2;
  if (swap) std::swap(n1, n2);  // n1 is the shorter
  n2 = n1 > budget ? n1 : std::max(n1, budget - n1);
  if (n1 + n2 > budget) {
    n1 = budget / 2;
    n2 = n1 + budget % 2;
  }
  if (swap) std::swap(n1, n2);
  if (a->size() > n1) a->resize(n1);
  if (b->size() > n2) b->resize(n2);
}

// HF ignores the ids tokenizer.json gives added tokens (it only warns when
// they differ): in file order, a token whose content the model or an earlier
// added token has takes that id, any other the next id after both.
void assign_added_ids(const tokenizers::TokenizerModel& model, std::vector<AddedToken>* added) {
  int32_t entries = 0;
  model.for_each_token([&](std::string_view, int32_t) { ++entries; });
  std::unordered_map<std::string, int32_t> assigned;
  int32_t max_added = -1;
  for (AddedToken& a : *added) {
    if (const auto it = assigned.find(a.content); it != assigned.end()) {
      a.id = it->second;
    } else if (const auto id = model.token_to_id(a.content)) {
      a.id = *id;
    } else {
      a.id = std::max(max_added, entries - 1) + 1;
    }
    assigned.emplace(a.content, a.id);
    max_added = std::max(max_added, a.id);
  }
}

}  // namespace

Status Tokenizer::load(const std::string& model_dir, Tokenizer* out, int64_t id_limit) {
  TokenizerSource src;
  TESSERA_RETURN_IF_ERROR(read_tokenizer_source(model_dir, &src));
  const JsonFields f(src.path);
  Tokenizer t;
  t.source_ = src.path;
  std::unique_ptr<tokenizers::TokenizerModel> model;
  std::vector<AddedToken> added;
  std::optional<int32_t> pad;
  tokenizers::Decoder decoder;
  try {
    TESSERA_RETURN_IF_ERROR(src.type->load({src.root, f}, &model));
    TESSERA_RETURN_IF_ERROR(tokenizers::PostProcessor::read(f, src.root, &t.post_));
    TESSERA_RETURN_IF_ERROR(read_added_tokens(f, src.root, &added));
    TESSERA_RETURN_IF_ERROR(tokenizers::Decoder::read(f, src.root, &decoder));
    TESSERA_RETURN_IF_ERROR(read_pad_id(f, src.root, &pad));
  } catch (const nlohmann::json::exception& e) {
    // A field of an unexpected JSON type that the checks did not foresee.
    return invalid_argument(src.path + ": unexpected content (" + e.what() + ")");
  }
  assign_added_ids(*model, &added);
  // The decoder's table is sized by the largest id set: each id is checked
  // before it is set, so a hostile one near 2^31 is refused rather than
  // allocating 2^31 strings.
  t.tokens_ = tokenizers::IdDecoder(std::move(decoder));
  int32_t max_id = std::max(t.post_.first_special(), t.post_.last_special());
  std::string bad;
  const auto set = [&](std::string_view token, int32_t id, bool special, const char* where) {
    if (!bad.empty()) return;
    if (id < 0 || id >= id_limit) {
      bad = src.path + ": " + where + " \"" + json_input::clip(std::string(token)) + "\" has id " +
            std::to_string(id) + ", outside [0, " + std::to_string(id_limit) + ")" +
            (id_limit == kMaxIds ? std::string(" (no vocabulary is that large)")
                                 : " (config.json vocab_size = " + std::to_string(id_limit) + ")");
      return;
    }
    t.tokens_.set_token(id, std::string(token), special);
    max_id = std::max(max_id, id);
  };
  model->for_each_token([&](std::string_view token, int32_t id) {
    set(token, id, /*special=*/false, "the vocabulary's token");
  });
  for (const AddedToken& a : added) set(a.content, a.id, a.special, "added token");
  if (!bad.empty()) return invalid_argument(bad);
  // Padding never reaches the encoder (batches are packed without it); a
  // vocabulary without a pad token gets BERT's 0.
  if (pad) {
    t.pad_id_ = *pad;
  } else {
    for (const char* name : {"[PAD]", "<pad>"}) {
      if (const auto id = model->token_to_id(name); id && t.pad_id_ == 0) t.pad_id_ = *id;
    }
  }
  max_id = std::max(max_id, t.pad_id_);
  t.vocab_size_ = static_cast<size_t>(max_id) + 1;
  t.unk_id_ = model->unk_id().value_or(-1);
  // HF matches normalized added tokens after the normalizer: the model does.
  std::vector<AddedToken> raw, normalized;
  for (AddedToken& a : added) (a.normalized ? normalized : raw).push_back(std::move(a));
  if (!normalized.empty()) {
    TESSERA_RETURN_IF_ERROR(model->set_normalized_added_tokens(std::move(normalized)));
  }
  t.added_ = AddedTokenMatcher(std::move(raw));
  t.model_ = std::move(model);
  *out = std::move(t);
  return Status::Ok();
}

Status Tokenizer::tokenize(std::string_view text, std::vector<TokenSpan>* out,
                           WorkLimit* limit) const {
  out->clear();
  return tokenize_append(text, out, limit);
}

Status Tokenizer::encode(std::string_view text, size_t max_length, std::vector<TokenSpan>* out,
                         WorkLimit* limit) const {
  const size_t specials = post_.added_tokens(/*pair=*/false);
  if (max_length < specials) return no_room("encode", max_length, specials);
  std::vector<TokenSpan> tokens;
  TESSERA_RETURN_IF_ERROR(tokenize_append(text, &tokens, limit));
  if (tokens.size() > max_length - specials) tokens.resize(max_length - specials);
  post_.apply(tokens, nullptr, out, nullptr);
  return Status::Ok();
}

Status Tokenizer::encode_pair(std::string_view a, std::string_view b, size_t max_length,
                              std::vector<TokenSpan>* out, std::vector<int32_t>* type_ids,
                              WorkLimit* limit) const {
  const size_t specials = post_.added_tokens(/*pair=*/true);
  if (max_length < specials) return no_room("encode_pair", max_length, specials);
  std::vector<TokenSpan> ta, tb;
  TESSERA_RETURN_IF_ERROR(tokenize_append(a, &ta, limit));
  TESSERA_RETURN_IF_ERROR(tokenize_append(b, &tb, limit));
  truncate_longest_first(max_length - specials, &ta, &tb);
  post_.apply(ta, &tb, out, type_ids);
  return Status::Ok();
}

Status Tokenizer::tokenize_append(std::string_view text, std::vector<TokenSpan>* out,
                                  WorkLimit* limit) const {
  TESSERA_RETURN_IF_ERROR(check_utf8(text));
  if (limit != nullptr) TESSERA_RETURN_IF_ERROR(limit->check_now());
  const size_t first = out->size();
  std::vector<size_t> added;  // indices (from `first`) of added tokens
  size_t segment = 0;         // start of the text not yet tokenized
  size_t scan = 0;
  AddedTokenMatcher::Match m;
  while (added_.next(text, &scan, segment, &m)) {
    if (m.begin > segment) {
      TESSERA_RETURN_IF_ERROR(model_->tokenize(text, segment, m.begin, out, limit));
    }
    added.push_back(out->size() - first);
    out->push_back({m.id, static_cast<int64_t>(m.begin), static_cast<int64_t>(m.end)});
    segment = std::max(segment, m.end);
  }
  if (segment < text.size()) {
    TESSERA_RETURN_IF_ERROR(model_->tokenize(text, segment, text.size(), out, limit));
  }
  if (!post_.trims_offsets()) return Status::Ok();
  std::vector<TokenSpan> mine(out->begin() + static_cast<std::ptrdiff_t>(first), out->end());
  const std::vector<TokenSpan> raw = mine;
  post_.trim_offsets(
      [&](size_t i) -> std::string_view {
        if (std::binary_search(added.begin(), added.end(), i)) {
          return text.substr(static_cast<size_t>(raw[i].begin),
                             static_cast<size_t>(raw[i].end - raw[i].begin));
        }
        const std::string* t = tokens_.token(raw[i].id);
        return t ? std::string_view(*t) : std::string_view();
      },
      &mine);
  std::copy(mine.begin(), mine.end(), out->begin() + static_cast<std::ptrdiff_t>(first));
  return Status::Ok();
}

std::string Tokenizer::describe() const {
  std::string s = "tokenizer: " + source_ + "\n";
  s += model_->describe();
  s += "post_processor: " + post_.describe() + "\n";
  s += "decoder: " + tokens_.decoder().describe() + "\n";
  s += "vocab size: " + std::to_string(vocab_size_) + "\n";
  const auto name = [&](int32_t id) {
    const std::string* t = tokens_.token(id);
    return (t ? "\"" + json_input::clip(*t) + "\"" : std::string("?")) + " = " + std::to_string(id);
  };
  const auto names = [&](const std::vector<int32_t>& ids) {
    std::string joined;
    for (int32_t id : ids) joined += (joined.empty() ? "" : " ") + name(id);
    return ids.empty() ? std::string("none") : joined;
  };
  const SequenceFrame& f = frame();
  s += "special tokens: " +
       (f.prefix.size() == 1 && f.suffix.size() == 1
            ? "first " + name(cls_id()) + ", last " + name(sep_id())
            : "before the text " + names(f.prefix) + ", after it " + names(f.suffix)) +
       ", pad " + name(pad_id_) +
       (unk_id_ >= 0 ? ", unk " + name(unk_id_) : std::string(", no unk")) + "\n";
  return s;
}

}  // namespace tessera::model
