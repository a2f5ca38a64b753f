#include "model/tokenizer_added_tokens.h"

#include <utility>

#include "model/tokenizer_unicode.h"
#include "model/tokenizer_utf8.h"

namespace tessera::model {
namespace {

// Start of the character that ends just before byte `pos` (pos > 0).
size_t previous_char_start(std::string_view text, size_t pos) {
  do {
    --pos;
  } while (pos > 0 && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80);
  return pos;
}

char32_t char_at(std::string_view text, size_t pos) {
  int len = 0;
  return decode_utf8(text.data() + pos, &len);
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> tokens) {
  for (AddedToken& t : tokens) {
    if (t.content.empty()) continue;
    first_byte_[static_cast<unsigned char>(t.content[0])] = true;
    tokens_.push_back(std::move(t));
  }
}

bool AddedTokenMatcher::find_raw(std::string_view text, size_t pos, size_t* begin,
                                 const AddedToken** tok) const {
  for (; pos < text.size(); ++pos) {
    if (!first_byte_[static_cast<unsigned char>(text[pos])]) continue;
    const AddedToken* best = nullptr;
    const std::string_view rest = text.substr(pos);
    for (const AddedToken& t : tokens_) {
      if (rest.starts_with(t.content) &&
          (best == nullptr || t.content.size() > best->content.size())) {
        best = &t;
      }
    }
    if (best != nullptr) {
      *begin = pos;
      *tok = best;
      return true;
    }
  }
  return false;
}

bool AddedTokenMatcher::next(std::string_view text, size_t* scan, size_t prev_end, Match* m) const {
  if (tokens_.empty()) return false;
  size_t begin = 0;
  const AddedToken* tok = nullptr;
  while (find_raw(text, *scan, &begin, &tok)) {
    size_t end = begin + tok->content.size();
    // The search resumes after the raw match whether or not it is accepted
    // (HF iterates non-overlapping raw matches and filters them).
    *scan = end;
    if (tok->single_word) {
      const bool word_before =
          begin > 0 && unicode::is_word_char(char_at(text, previous_char_start(text, begin)));
      const bool word_after = end < text.size() && unicode::is_word_char(char_at(text, end));
      if (word_before || word_after) continue;
    }
    if (tok->lstrip) {
      while (begin > prev_end) {
        const size_t prev = previous_char_start(text, begin);
        if (prev < prev_end || !unicode::is_whitespace(char_at(text, prev))) break;
        begin = prev;
      }
    }
    if (tok->rstrip) {
      while (end < text.size()) {
        int len = 0;
        if (!unicode::is_whitespace(decode_utf8(text.data() + end, &len))) break;
        end += len;
      }
    }
    *m = {begin, end, tok->id};
    return true;
  }
  *scan = text.size();
  return false;
}

}  // namespace tessera::model
