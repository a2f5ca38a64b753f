#include "model/tokenizers/wordpiece/wordpiece_tokenizer.h"

#include "model/tokenizer_unicode.h"
#include "model/tokenizer_utf8.h"

namespace tessera::model::tokenizers {

// Per-span buffers, reused for every word: the normalized bytes of the
// current word, the original byte offset of the character each normalized
// byte came from, and WordPiece's output.
struct WordPieceTokenizer::Scratch {
  std::string word;
  std::vector<int64_t> origin;
  std::vector<WordPiece::Piece> pieces;
  // A word past `cap` bytes has more than max_input_chars_per_word
  // characters: it is [UNK] whole, so its bytes are not kept (a 1 MB word
  // would otherwise hold 9 MB of scratch); only its last character's origin.
  size_t cap = 0;
  int64_t overflow_origin = -1;  // >= 0: the word went past cap
  void keep(char byte, int64_t at) {
    if (word.size() < cap) {
      word.push_back(byte);
      origin.push_back(at);
    } else {
      overflow_origin = at;
    }
  }
};

WordPieceTokenizer::WordPieceTokenizer(WordPiece wordpiece, const BertNormalizerOptions& normalizer,
                                       std::vector<std::pair<std::string, int32_t>> vocab)
    : wordpiece_(std::move(wordpiece)), normalizer_(normalizer), vocab_(std::move(vocab)) {
  // Derived from the general path so the fast path cannot disagree with it.
  for (char32_t c = 0; c < 0x80; ++c) {
    NormalizedChar n;
    normalizer_.normalize(c, &n);
    AsciiRule& rule = ascii_[c];
    if (n.count == 0) {
      rule = {AsciiRule::kDrop, 0};
    } else if (unicode::is_whitespace(n.cp[0])) {
      rule = {AsciiRule::kSplit, 0};
    } else if (unicode::is_punctuation(n.cp[0])) {
      rule = {AsciiRule::kIsolate, static_cast<char>(n.cp[0])};
    } else {
      rule = {AsciiRule::kAppend, static_cast<char>(n.cp[0])};
    }
  }
}

std::string WordPieceTokenizer::describe() const {
  const BertNormalizerOptions& o = normalizer_.options();
  const auto flag = [](bool b) { return b ? "true" : "false"; };
  return "model: WordPiece (" + std::to_string(wordpiece_.size()) +
         " entries)\nnormalizer: BertNormalizer (clean_text " + flag(o.clean_text) +
         ", handle_chinese_chars " + flag(o.handle_chinese_chars) + ", strip_accents " +
         flag(o.strip_accents) + ", lowercase " + flag(o.lowercase) +
         ")\npre_tokenizer: BertPreTokenizer\n";
}

namespace {

// `c` as BertNormalizer writes it into HF's normalized text: its code
// points, with the spaces HF puts around a Chinese character.
void append_normalized(const BertNormalizer& normalizer, char32_t c, std::string* out,
                       size_t* count) {
  NormalizedChar n;
  normalizer.normalize(c, &n);
  const size_t before = out->size();
  if (n.isolated) out->push_back(' ');
  for (int k = 0; k < n.count; ++k) {
    char bytes[4];
    out->append(bytes, static_cast<size_t>(encode_utf8(n.cp[k], bytes)));
  }
  if (n.isolated) out->push_back(' ');
  *count = out->size() - before;
}

}  // namespace

Status WordPieceTokenizer::set_normalized_added_tokens(std::vector<AddedToken> tokens) {
  for (AddedToken& t : tokens) {
    std::string normalized;
    for (size_t i = 0; i < t.content.size();) {
      int len = 0;
      const char32_t c = decode_utf8(t.content.data() + i, &len);
      size_t count = 0;
      append_normalized(normalizer_, c, &normalized, &count);
      i += static_cast<size_t>(len);
    }
    t.content = std::move(normalized);
    if (t.content.empty()) continue;
    for (char32_t c = 0; c < 0x80; ++c) {
      std::string n;
      size_t count = 0;
      append_normalized(normalizer_, c, &n, &count);
      if (!n.empty() && n[0] == t.content[0]) starts_normalized_[c] = true;
    }
  }
  normalized_added_ = AddedTokenMatcher(std::move(tokens));
  return Status::Ok();
}

bool WordPieceTokenizer::may_hold_normalized_token(std::string_view text, size_t begin,
                                                   size_t end) const {
  for (size_t i = begin; i < end; ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b >= 0x80 || starts_normalized_[b]) return true;
  }
  return false;
}

Status WordPieceTokenizer::tokenize(std::string_view text, size_t begin, size_t end,
                                    std::vector<TokenSpan>* out, WorkLimit* limit) const {
  if (normalized_added_.empty() || !may_hold_normalized_token(text, begin, end)) {
    return tokenize_words(text, begin, end, out, limit);
  }
  // HF matches these in the normalized text. BertNormalizer maps each
  // character on its own, so a match that covers whole characters of the
  // normalized text is a split of the raw text at those characters.
  std::string normalized;
  std::vector<std::pair<size_t, size_t>> origin;  // per normalized byte: raw [begin, end)
  for (size_t i = begin; i < end;) {
    int len = 0;
    const char32_t c = decode_utf8(text.data() + i, &len);
    size_t count = 0;
    append_normalized(normalizer_, c, &normalized, &count);
    origin.insert(origin.end(), count, {i, i + static_cast<size_t>(len)});
    i += static_cast<size_t>(len);
  }
  size_t raw = begin, scan = 0, prev = 0;
  AddedTokenMatcher::Match m;
  while (normalized_added_.next(normalized, &scan, prev, &m)) {
    const auto [rb, first_end] = origin[m.begin];
    const auto [last_begin, re] = origin[m.end - 1];
    const bool whole = (m.begin == 0 || origin[m.begin - 1].first != rb) &&
                       (m.end == normalized.size() || origin[m.end].first != last_begin);
    // A match that starts or ends inside one character's expansion (not seen
    // in practice) is left to the words: tessera splits raw text only.
    if (!whole || rb < raw) continue;
    (void)first_end;
    if (rb > raw) {
      TESSERA_RETURN_IF_ERROR(tokenize_words(text, raw, rb, out, limit));
    }
    out->push_back({m.id, static_cast<int64_t>(rb), static_cast<int64_t>(re)});
    raw = re;
    prev = m.end;
  }
  if (raw < end) return tokenize_words(text, raw, end, out, limit);
  return Status::Ok();
}

Status WordPieceTokenizer::tokenize_words(std::string_view text, size_t begin, size_t end,
                                          std::vector<TokenSpan>* out, WorkLimit* limit) const {
  Scratch scratch;
  Scratch* s = &scratch;
  s->cap = 4 * wordpiece_.max_chars() + 4;
  const auto end_of = [&](int64_t at) {
    return at + utf8_length(static_cast<unsigned char>(text[static_cast<size_t>(at)]));
  };
  const auto flush = [&] {
    if (s->word.empty()) return;
    if (s->overflow_origin >= 0) {
      out->push_back({wordpiece_.unk_id(), s->origin[0], end_of(s->overflow_origin), false});
    } else {
      s->pieces.clear();
      wordpiece_.tokenize(s->word, &s->pieces);
      for (const WordPiece::Piece& p : s->pieces) {
        out->push_back({p.id, s->origin[p.begin], end_of(s->origin[p.end - 1]),
                        /*continues_word=*/p.begin != 0});
      }
    }
    s->word.clear();
    s->origin.clear();
    s->overflow_origin = -1;
  };
  const auto append = [&](char32_t c, int64_t origin) {
    char bytes[4];
    const int n = encode_utf8(c, bytes);
    for (int k = 0; k < n; ++k) s->keep(bytes[k], origin);
  };

  NormalizedChar n;
  // The limit is told the bytes passed every kReportBytes (one compare per
  // byte here; a word costs at most its length, so the bound holds).
  constexpr size_t kReportBytes = 1024;
  size_t reported = begin;
  for (size_t i = begin; i < end;) {
    if (i - reported >= kReportBytes) {
      TESSERA_RETURN_IF_ERROR(advance(limit, i - reported));
      reported = i;
    }
    const auto b = static_cast<unsigned char>(text[i]);
    if (b < 0x80) {
      const AsciiRule rule = ascii_[b];
      switch (rule.action) {
        case AsciiRule::kAppend:
          s->keep(rule.byte, static_cast<int64_t>(i));
          break;
        case AsciiRule::kSplit:
          flush();
          break;
        case AsciiRule::kIsolate:
          flush();
          s->keep(rule.byte, static_cast<int64_t>(i));
          flush();
          break;
        case AsciiRule::kDrop:
          break;
      }
      ++i;
      continue;
    }
    int len = 0;
    const char32_t c = decode_utf8(text.data() + i, &len);
    normalizer_.normalize(c, &n);
    // HF puts spaces around a Chinese character: it is a word by itself.
    if (n.isolated) flush();
    for (int k = 0; k < n.count; ++k) {
      const char32_t x = n.cp[k];
      if (unicode::is_whitespace(x)) {
        flush();
      } else if (unicode::is_punctuation(x)) {
        flush();
        append(x, static_cast<int64_t>(i));
        flush();
      } else {
        append(x, static_cast<int64_t>(i));
      }
    }
    if (n.isolated) flush();
    i += len;
  }
  flush();
  return advance(limit, end - reported);
}

}  // namespace tessera::model::tokenizers
