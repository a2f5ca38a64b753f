#include "model/tokenizers/wordpiece/wordpiece.h"

#include <algorithm>
#include <limits>

namespace tessera::model {
namespace {

// Prefix hashes kept on the stack; longer vocabulary entries (none in BERT
// vocabularies, whose longest is ~20 bytes) are hashed per probe.
constexpr size_t kPrefixHashes = 64;

bool is_continuation_byte(char b) { return (static_cast<unsigned char>(b) & 0xC0) == 0x80; }

size_t count_chars(std::string_view s) {
  size_t n = 0;
  for (char b : s) n += !is_continuation_byte(b);
  return n;
}

}  // namespace

Status WordPiece::create(const std::vector<std::pair<std::string, int32_t>>& vocab,
                         const WordPieceOptions& options, const std::string& source,
                         WordPiece* out) {
  WordPiece wp;
  wp.max_chars_ = options.max_input_chars_per_word;
  const std::string& prefix = options.continuing_subword_prefix;
  std::vector<std::pair<std::string_view, int32_t>> words, continuations;
  words.reserve(vocab.size());
  size_t bytes = 0;
  for (const auto& [token, id] : vocab) {
    words.emplace_back(token, id);
    bytes += token.size();
    wp.max_id_ = std::max(wp.max_id_, id);
    if (std::string_view(token).starts_with(prefix)) {
      continuations.emplace_back(std::string_view(token).substr(prefix.size()), id);
    }
  }
  if (bytes > std::numeric_limits<uint32_t>::max()) {
    return invalid_argument(source + ": the vocabulary holds " + std::to_string(bytes) +
                            " bytes of tokens; at most 4 GiB are supported");
  }
  wp.words_.build(words);
  wp.continuations_.build(continuations);
  const int32_t unk = wp.words_.find(options.unk_token);
  if (unk < 0) {
    return invalid_argument(source + ": the unknown token \"" + options.unk_token +
                            "\" is not in the vocabulary (" + std::to_string(vocab.size()) +
                            " entries)");
  }
  wp.unk_id_ = unk;
  *out = std::move(wp);
  return Status::Ok();
}

std::optional<int32_t> WordPiece::find(std::string_view token) const {
  const int32_t id = words_.find(token);
  if (id < 0) return std::nullopt;
  return id;
}

int32_t WordPiece::longest_match(const VocabTable& vocab, std::string_view word, size_t start,
                                 size_t* end) {
  // No entry is longer than longest_key() bytes: start there, on a character
  // boundary, rather than at the end of the word as HF does. Same result.
  const size_t limit = std::min(word.size() - start, vocab.longest_key());
  uint64_t hashes[kPrefixHashes + 1];
  uint64_t h = VocabTable::kHashSeed;
  for (size_t n = 1; n <= std::min(limit, kPrefixHashes); ++n) {
    h = VocabTable::hash_step(h, word[start + n - 1]);
    hashes[n] = h;
  }
  size_t e = start + limit;
  while (e > start && e < word.size() && is_continuation_byte(word[e])) --e;
  while (e > start) {
    const std::string_view piece = word.substr(start, e - start);
    const uint64_t ph =
        piece.size() <= kPrefixHashes ? hashes[piece.size()] : VocabTable::hash(piece);
    if (const int32_t id = vocab.find(piece, ph); id >= 0) {
      *end = e;
      return id;
    }
    do {
      --e;
    } while (e > start && is_continuation_byte(word[e]));
  }
  return -1;
}

void WordPiece::tokenize(std::string_view word, std::vector<Piece>* out) const {
  const size_t first = out->size();
  const auto whole_word_unknown = [&] {
    out->resize(first);
    out->push_back({unk_id_, 0, word.size()});
  };
  if (count_chars(word) > max_chars_) return whole_word_unknown();
  for (size_t start = 0; start < word.size();) {
    size_t end = start;
    const int32_t id = longest_match(start == 0 ? words_ : continuations_, word, start, &end);
    if (id < 0) return whole_word_unknown();
    out->push_back({id, start, end});
    start = end;
  }
}

}  // namespace tessera::model
