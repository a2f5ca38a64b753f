#include "model/tokenizer.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "model/tokenizer_files.h"
#include "model/tokenizer_unicode.h"
#include "model/tokenizer_utf8.h"
#include "runtime/json_input.h"

namespace tessera::model {

// Per-call buffers, reused for every word of the text: the normalized bytes of
// the current word, the original byte offset of the character each normalized
// byte came from, and WordPiece's output.
struct Tokenizer::Scratch {
  std::string word;
  std::vector<int64_t> origin;
  std::vector<WordPiece::Piece> pieces;
};

namespace {

// The id of `token`, given explicitly or looked up in the vocabulary.
Status resolve_id(const WordPiece& wp, const std::optional<int32_t>& given,
                  const std::string& token, const std::string& what, const std::string& source,
                  int32_t* out) {
  if (given) {
    *out = *given;
    return Status::Ok();
  }
  const auto id = wp.find(token);
  if (!id) {
    return invalid_argument(source + ": the " + what + " token \"" + json_input::clip(token) +
                            "\" is not in the vocabulary");
  }
  *out = *id;
  return Status::Ok();
}

}  // namespace

Status Tokenizer::load(const std::string& model_dir, Tokenizer* out) {
  namespace fs = std::filesystem;
  const std::string json_path = (fs::path(model_dir) / "tokenizer.json").string();
  const std::string vocab_path = (fs::path(model_dir) / "vocab.txt").string();
  std::error_code ec;
  TokenizerSpec spec;
  std::string source;
  if (fs::exists(json_path, ec)) {
    source = json_path;
    TESSERA_RETURN_IF_ERROR(read_tokenizer_json(json_path, &spec));
  } else if (fs::exists(vocab_path, ec)) {
    source = vocab_path;
    TESSERA_RETURN_IF_ERROR(read_vocab_txt(vocab_path, &spec));
  } else {
    return not_found("no tokenizer in " + model_dir + ": neither tokenizer.json nor vocab.txt");
  }

  Tokenizer t;
  TESSERA_RETURN_IF_ERROR(WordPiece::create(spec.vocab, spec.wordpiece, source, &t.wordpiece_));
  TESSERA_RETURN_IF_ERROR(
      resolve_id(t.wordpiece_, spec.cls_id, spec.cls_token, "classifier", source, &t.cls_id_));
  TESSERA_RETURN_IF_ERROR(
      resolve_id(t.wordpiece_, spec.sep_id, spec.sep_token, "separator", source, &t.sep_id_));
  // Padding never reaches the encoder (batches are packed without it); a
  // vocabulary without a pad token gets BERT's 0.
  if (spec.pad_id) {
    t.pad_id_ = *spec.pad_id;
  } else if (const auto pad = t.wordpiece_.find(spec.pad_token)) {
    t.pad_id_ = *pad;
  }
  int32_t max_id = std::max({t.wordpiece_.max_id(), t.cls_id_, t.sep_id_, t.pad_id_});
  for (const AddedToken& a : spec.added_tokens) max_id = std::max(max_id, a.id);
  t.vocab_size_ = static_cast<size_t>(max_id) + 1;
  t.decoder_ = WordPieceDecoder(spec.decoder);
  for (const auto& [token, id] : spec.vocab) t.decoder_.set_token(id, token, /*special=*/false);
  for (const AddedToken& a : spec.added_tokens) t.decoder_.set_token(a.id, a.content, a.special);
  t.normalizer_ = BertNormalizer(spec.normalizer);
  t.added_ = AddedTokenMatcher(std::move(spec.added_tokens));
  t.init_ascii_rules();
  *out = std::move(t);
  return Status::Ok();
}

void Tokenizer::init_ascii_rules() {
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

Status Tokenizer::tokenize(std::string_view text, std::vector<TokenSpan>* out) const {
  out->clear();
  return tokenize_append(text, out);
}

Status Tokenizer::encode(std::string_view text, size_t max_length,
                         std::vector<TokenSpan>* out) const {
  if (max_length < 2) {
    return invalid_argument("encode: max_length = " + std::to_string(max_length) +
                            " leaves no room for [CLS] and [SEP] (needs >= 2)");
  }
  out->clear();
  out->push_back({cls_id_, 0, 0});
  TESSERA_RETURN_IF_ERROR(tokenize_append(text, out));
  if (out->size() > max_length - 1) out->resize(max_length - 1);
  out->push_back({sep_id_, 0, 0});
  return Status::Ok();
}

Status Tokenizer::encode_pair(std::string_view a, std::string_view b, size_t max_length,
                              std::vector<TokenSpan>* out, std::vector<int32_t>* type_ids) const {
  constexpr size_t kSpecials = 3;  // [CLS] a [SEP] b [SEP]
  if (max_length < kSpecials) {
    return invalid_argument("encode_pair: max_length = " + std::to_string(max_length) +
                            " leaves no room for the 3 special tokens (needs >= 3)");
  }
  std::vector<TokenSpan> first, second;
  TESSERA_RETURN_IF_ERROR(tokenize_append(a, &first));
  TESSERA_RETURN_IF_ERROR(tokenize_append(b, &second));
  // HF tokenizers' LongestFirst (utils/truncation.rs): with n1 the shorter
  // and room = max_length - specials, keep the shorter whole and cut the
  // longer to what is left; if both must give, split room in halves.
  const size_t room = max_length - kSpecials;
  if (first.size() + second.size() > room) {
    const bool swap = first.size() > second.size();
    size_t n1 = swap ? second.size() : first.size();
    size_t n2 = n1 > room ? n1 : std::max(n1, room - n1);
    if (n1 + n2 > room) {
      n1 = room / 2;
      n2 = n1 + room % 2;
    }
    if (swap) std::swap(n1, n2);
    first.resize(std::min(first.size(), n1));
    second.resize(std::min(second.size(), n2));
  }
  out->clear();
  out->push_back({cls_id_, 0, 0});
  out->insert(out->end(), first.begin(), first.end());
  out->push_back({sep_id_, 0, 0});
  const size_t second_start = out->size();
  out->insert(out->end(), second.begin(), second.end());
  out->push_back({sep_id_, 0, 0});
  type_ids->assign(out->size(), 0);
  std::fill(type_ids->begin() + static_cast<std::ptrdiff_t>(second_start), type_ids->end(), 1);
  return Status::Ok();
}

Status Tokenizer::tokenize_append(std::string_view text, std::vector<TokenSpan>* out) const {
  if (const size_t bad = find_invalid_utf8(text); bad != text.size()) {
    char byte[8];
    std::snprintf(byte, sizeof(byte), "0x%02X", static_cast<unsigned char>(text[bad]));
    return invalid_argument("text is not valid UTF-8 at byte offset " + std::to_string(bad) +
                            " (byte " + byte + ")");
  }
  Scratch s;
  size_t segment = 0;  // start of the text not yet tokenized
  size_t scan = 0;
  AddedTokenMatcher::Match m;
  while (added_.next(text, &scan, segment, &m)) {
    if (m.begin > segment) tokenize_segment(text, segment, m.begin, &s, out);
    out->push_back({m.id, static_cast<int64_t>(m.begin), static_cast<int64_t>(m.end)});
    segment = std::max(segment, m.end);
  }
  tokenize_segment(text, segment, text.size(), &s, out);
  return Status::Ok();
}

void Tokenizer::tokenize_segment(std::string_view text, size_t begin, size_t end, Scratch* s,
                                 std::vector<TokenSpan>* out) const {
  const auto flush = [&] {
    if (s->word.empty()) return;
    s->pieces.clear();
    wordpiece_.tokenize(s->word, &s->pieces);
    for (const WordPiece::Piece& p : s->pieces) {
      const int64_t first = s->origin[p.begin];
      const int64_t last = s->origin[p.end - 1];
      out->push_back({p.id, first, last + utf8_length(static_cast<unsigned char>(text[last])),
                      /*continues_word=*/p.begin != 0});
    }
    s->word.clear();
    s->origin.clear();
  };
  const auto append = [&](char32_t c, int64_t origin) {
    char bytes[4];
    const int n = encode_utf8(c, bytes);
    s->word.append(bytes, n);
    s->origin.insert(s->origin.end(), n, origin);
  };

  NormalizedChar n;
  for (size_t i = begin; i < end;) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b < 0x80) {
      const AsciiRule rule = ascii_[b];
      switch (rule.action) {
        case AsciiRule::kAppend:
          s->word.push_back(rule.byte);
          s->origin.push_back(static_cast<int64_t>(i));
          break;
        case AsciiRule::kSplit:
          flush();
          break;
        case AsciiRule::kIsolate:
          flush();
          s->word.push_back(rule.byte);
          s->origin.push_back(static_cast<int64_t>(i));
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
}

}  // namespace tessera::model
