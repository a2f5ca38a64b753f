#include "model/tokenizers/unigram/unigram_model.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "model/tokenizer_utf8.h"
#include "runtime/json_input.h"

namespace tessera::model::tokenizers {

namespace {
constexpr double kUnkPenalty = 10.0;  // HF's K_UNK_PENALTY below the lowest score
// Longer pieces are refused at load (UnigramModel::create).
constexpr size_t kMaxPieceBytes = 1024;
}  // namespace

void UnigramModel::HashSet::build(const std::vector<uint64_t>& hashes) {
  size_t size = 16;
  while (size < 2 * hashes.size()) size *= 2;
  slots_.assign(size, 0);
  for (uint64_t h : hashes) {
    h |= 1;  // never 0, the empty slot
    for (size_t i = (h >> 20) & (size - 1);; i = (i + 1) & (size - 1)) {
      if (slots_[i] == h) break;
      if (slots_[i] == 0) {
        slots_[i] = h;
        break;
      }
    }
  }
}

bool UnigramModel::HashSet::contains(uint64_t h) const {
  h |= 1;
  const size_t mask = slots_.size() - 1;
  for (size_t i = (h >> 20) & mask;; i = (i + 1) & mask) {
    if (slots_[i] == h) return true;
    if (slots_[i] == 0) return false;
  }
}

Status UnigramModel::create(std::vector<std::pair<std::string, double>> pieces,
                            std::optional<int32_t> unk_id, bool byte_fallback,
                            const std::string& source, std::unique_ptr<const WordModel>* out) {
  auto m = std::make_unique<UnigramModel>();
  if (pieces.empty()) return invalid_argument(source + ": model.vocab is empty");
  if (pieces.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return invalid_argument(source + ": model.vocab has too many pieces");
  }
  if (unk_id && static_cast<size_t>(*unk_id) >= pieces.size()) {
    return invalid_argument(source + ": model.unk_id " + std::to_string(*unk_id) +
                            " is not an index of model.vocab (" + std::to_string(pieces.size()) +
                            " pieces)");
  }
  size_t bytes = 0;
  double min_score = std::numeric_limits<double>::infinity();
  std::vector<std::pair<std::string_view, int32_t>> entries;
  entries.reserve(pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    // The Viterbi tries every length up to the longest piece at every
    // character: a hostile long piece would make it quadratic.
    if (pieces[i].first.size() > kMaxPieceBytes) {
      return invalid_argument(source + ": model.vocab[" + std::to_string(i) + "] is " +
                              std::to_string(pieces[i].first.size()) +
                              " bytes; tessera reads Unigram pieces of at most " +
                              std::to_string(kMaxPieceBytes) +
                              " bytes (SentencePiece makes them at most 16 characters by default)");
    }
    entries.emplace_back(pieces[i].first, static_cast<int32_t>(i));
    bytes += pieces[i].first.size();
    min_score = std::min(min_score, pieces[i].second);
  }
  if (bytes > std::numeric_limits<uint32_t>::max()) {
    return invalid_argument(source + ": the vocabulary holds too many bytes of pieces");
  }
  m->table_.build(entries);
  std::vector<uint64_t> prefixes;
  prefixes.reserve(bytes);
  for (const auto& [piece, score] : pieces) {
    uint64_t h = VocabTable::kHashSeed;
    for (size_t len = 1; len < piece.size(); ++len) {
      h = VocabTable::hash_step(h, piece[len - 1]);
      prefixes.push_back(h);
    }
  }
  m->prefixes_.build(prefixes);
  m->unk_score_ = min_score - kUnkPenalty;
  m->unk_id_ = unk_id;
  m->byte_fallback_ = byte_fallback;
  m->pieces_ = std::move(pieces);
  *out = std::move(m);
  return Status::Ok();
}

void UnigramModel::tokenize(std::string_view word, std::vector<Piece>* out) const {
  // best[e]: the best segmentation of word[0, e): its score, the start of its
  // last piece and that piece's id (-1: none reaches e yet).
  struct Node {
    double score = 0;
    size_t start = 0;
    int32_t id = -1;
  };
  const size_t n = word.size();
  std::vector<Node> best(n + 1);
  best[0].id = -2;  // the empty prefix is reachable
  const size_t longest = table_.longest_key();
  for (size_t start = 0; start < n;) {
    const size_t mblen = static_cast<size_t>(utf8_length(static_cast<unsigned char>(word[start])));
    const double base = best[start].score;
    const size_t limit = std::min(longest, n - start);
    uint64_t h = VocabTable::kHashSeed;
    bool has_single = false;
    // h is the hash of word[start, start + len), grown a byte at a time.
    for (size_t len = 1; len <= limit; ++len) {
      h = VocabTable::hash_step(h, word[start + len - 1]);
      const std::string_view piece = word.substr(start, len);
      if (const int32_t id = table_.find(piece, h); id >= 0) {
        Node& target = best[start + len];
        const double score = base + pieces_[static_cast<size_t>(id)].second;
        if (target.id == -1 || score > target.score) target = {score, start, id};
        if (len == mblen) has_single = true;
      }
      if (!prefixes_.contains(h)) break;  // no longer piece starts so
    }
    if (!has_single && unk_id_) {
      Node& target = best[start + mblen];
      const double score = base + unk_score_;
      if (target.id == -1 || score > target.score) target = {score, start, *unk_id_};
    }
    start += mblen;
  }
  // Back from the end; adjacent unknown pieces fuse into one.
  std::vector<Piece> reversed;
  for (size_t end = n; end > 0;) {
    const Node& node = best[end];
    if (node.id < 0) return;  // unreachable: no unk id and no piece (HF fails here)
    const bool unk = unk_id_ && node.id == *unk_id_;
    if (unk && !reversed.empty() && reversed.back().id == -3) {
      reversed.back().begin = node.start;
    } else {
      reversed.push_back({unk ? -3 : node.id, node.start, end});
    }
    end = node.start;
  }
  char name[8];
  for (auto it = reversed.rbegin(); it != reversed.rend(); ++it) {
    Piece p = *it;
    if (p.id != -3) {
      // The piece's own id: the last of its duplicates, as HF's map gives.
      p.id = table_.find(word.substr(p.begin, p.end - p.begin));
      out->push_back(p);
      continue;
    }
    const std::string_view s = word.substr(p.begin, p.end - p.begin);
    // A fused unknown that is itself a piece is that piece (HF maps the
    // string); else its bytes, with byte_fallback; else the unknown token.
    if (const int32_t id = table_.find(s); id >= 0) {
      out->push_back({id, p.begin, p.end});
      continue;
    }
    if (byte_fallback_) {
      std::vector<int32_t> ids;
      for (char b : s) {
        std::snprintf(name, sizeof(name), "<0x%02X>", static_cast<unsigned char>(b));
        const int32_t id = table_.find(name);
        if (id < 0) break;
        ids.push_back(id);
      }
      if (ids.size() == s.size()) {
        for (int32_t id : ids) out->push_back({id, p.begin, p.end});
        continue;
      }
    }
    out->push_back({*unk_id_, p.begin, p.end});
  }
}

std::string UnigramModel::describe() const {
  std::string s = "Unigram (" + std::to_string(pieces_.size()) + " pieces";
  if (unk_id_) {
    s += ", unk \"" + json_input::clip(pieces_[static_cast<size_t>(*unk_id_)].first) + "\"";
  }
  if (byte_fallback_) s += ", byte_fallback";
  return s + ")";
}

}  // namespace tessera::model::tokenizers
