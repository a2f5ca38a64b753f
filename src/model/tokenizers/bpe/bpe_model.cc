#include "model/tokenizers/bpe/bpe_model.h"

#include <cstdio>
#include <functional>
#include <limits>
#include <queue>

#include "model/tokenizer_utf8.h"
#include "runtime/json_input.h"

namespace tessera::model::tokenizers {

Status BpeModel::create(std::vector<std::pair<std::string, int32_t>> vocab,
                        const std::vector<std::pair<std::string, std::string>>& merges,
                        BpeOptions options, const std::string& source,
                        std::unique_ptr<const WordModel>* out) {
  auto m = std::make_unique<BpeModel>();
  size_t bytes = 0;
  std::vector<std::pair<std::string_view, int32_t>> entries;
  entries.reserve(vocab.size());
  for (const auto& [token, id] : vocab) {
    entries.emplace_back(token, id);
    bytes += token.size();
  }
  if (bytes > std::numeric_limits<uint32_t>::max()) {
    return invalid_argument(source + ": the vocabulary holds " + std::to_string(bytes) +
                            " bytes of tokens; at most 4 GiB are supported");
  }
  m->table_.build(entries);
  if (options.unk_token) {
    m->unk_id_ = m->table_.find(*options.unk_token);
    if (m->unk_id_ < 0) {
      return invalid_argument(source + ": model.unk_token \"" +
                              json_input::clip(*options.unk_token) + "\" is not in the vocabulary");
    }
  }
  const size_t prefix_len = options.continuing_subword_prefix.size();
  m->merges_.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const std::string& a = merges[i].first;  // (clang 14 cannot capture a structured binding)
    const std::string& b = merges[i].second;
    const auto entry = [&] {
      return source + ": model.merges[" + std::to_string(i) + "] (\"" + json_input::clip(a) +
             "\" \"" + json_input::clip(b) + "\")";
    };
    const int32_t ia = m->table_.find(a), ib = m->table_.find(b);
    if (ia < 0 || ib < 0) {
      return invalid_argument(entry() + ": \"" + json_input::clip(ia < 0 ? a : b) +
                              "\" is not in the vocabulary");
    }
    if (b.size() < prefix_len) {
      return invalid_argument(entry() + ": \"" + json_input::clip(b) +
                              "\" is shorter than the continuing_subword_prefix");
    }
    const std::string merged = a + b.substr(prefix_len);
    const int32_t id = m->table_.find(merged);
    if (id < 0) {
      return invalid_argument(entry() + ": the merged token \"" + json_input::clip(merged) +
                              "\" is not in the vocabulary");
    }
    m->merges_[key(ia, ib)] = {static_cast<uint32_t>(i), id};  // a later duplicate wins, as in HF
  }
  m->vocab_ = std::move(vocab);
  m->options_ = std::move(options);
  *out = std::move(m);
  return Status::Ok();
}

void BpeModel::initial_symbols(std::string_view word, std::vector<Piece>* out) const {
  std::optional<Piece> unk;  // a pending unknown symbol (fused while fuse_unk)
  std::string s;
  for (size_t i = 0; i < word.size();) {
    const size_t len = static_cast<size_t>(utf8_length(static_cast<unsigned char>(word[i])));
    const size_t end = i + len;
    s.assign(word.substr(i, len));
    if (i != 0) s.insert(0, options_.continuing_subword_prefix);
    if (end == word.size()) s += options_.end_of_word_suffix;
    if (const int32_t id = table_.find(s); id >= 0) {
      if (unk) out->push_back(*unk);
      unk.reset();
      out->push_back({id, i, end});
      i = end;
      continue;
    }
    if (options_.byte_fallback) {
      std::vector<int32_t> ids;
      char name[8];
      for (char b : s) {
        std::snprintf(name, sizeof(name), "<0x%02X>", static_cast<unsigned char>(b));
        const int32_t id = table_.find(name);
        if (id < 0) break;
        ids.push_back(id);
      }
      if (ids.size() == s.size()) {
        // HF gives each byte token a length of 1 byte of the word.
        size_t at = i;
        for (int32_t id : ids) {
          out->push_back({id, std::min(at, end), std::min(at + 1, end)});
          ++at;
        }
        i = end;
        continue;
      }
    }
    if (unk_id_ >= 0) {
      if (unk && options_.fuse_unk) {
        unk->end = end;
      } else {
        if (unk) out->push_back(*unk);
        unk = Piece{unk_id_, i, end};
      }
    }
    i = end;
  }
  if (unk) out->push_back(*unk);
}

void BpeModel::tokenize(std::string_view word, std::vector<Piece>* out) const {
  if (options_.ignore_merges) {
    if (const int32_t id = table_.find(word); id >= 0) {
      out->push_back({id, 0, word.size()});
      return;
    }
  }
  std::vector<Piece> symbols;
  initial_symbols(word, &symbols);
  // HF's order (the adjacent pair of lowest rank, leftmost first) from a heap
  // of candidate merges over a linked list of symbols: O(n log n) in the
  // word's length. A scan for the best pair per merge was O(n^2), and a run of
  // 300 KB of spaces (one word in byte-level vocabularies) cost a minute.
  // Entries go stale when a neighbour merges; they are checked when popped.
  const size_t n = symbols.size();
  if (n < 2) {
    out->insert(out->end(), symbols.begin(), symbols.end());
    return;
  }
  constexpr size_t kNone = std::numeric_limits<size_t>::max();
  // One allocation per word: most words are a handful of symbols.
  struct Link {
    size_t prev, next;
    bool gone;  // merged into its left neighbour
  };
  std::vector<Link> links(n);
  for (size_t i = 0; i < n; ++i)
    links[i] = {i > 0 ? i - 1 : kNone, i + 1 < n ? i + 1 : kNone, false};
  const auto lookup = [&](size_t left) -> const Merge* {
    const size_t right = links[left].next;
    if (right == kNone) return nullptr;
    const auto it = merges_.find(key(symbols[left].id, symbols[right].id));
    return it == merges_.end() ? nullptr : &it->second;
  };
  // (rank, left symbol): the smallest rank first, then the leftmost.
  using Candidate = std::pair<uint32_t, size_t>;
  std::vector<Candidate> candidates;
  candidates.reserve(n);
  for (size_t i = 0; i + 1 < n; ++i) {
    if (const Merge* m = lookup(i)) candidates.emplace_back(m->rank, i);
  }
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap(
      std::greater<>(), std::move(candidates));
  const auto push = [&](size_t left) {
    if (const Merge* m = lookup(left)) heap.emplace(m->rank, left);
  };
  while (!heap.empty()) {
    const auto [rank, left] = heap.top();
    heap.pop();
    if (links[left].gone) continue;
    const Merge* m = lookup(left);
    if (m == nullptr || m->rank != rank) continue;  // the pair changed since it was pushed
    const size_t right = links[left].next;
    symbols[left] = {m->id, symbols[left].begin, symbols[right].end};
    links[right].gone = true;
    links[left].next = links[right].next;
    if (links[right].next != kNone) links[links[right].next].prev = left;
    push(left);
    if (links[left].prev != kNone) push(links[left].prev);
  }
  for (size_t i = 0; i != kNone; i = links[i].next) out->push_back(symbols[i]);
}

std::string BpeModel::describe() const {
  std::string s = "BPE (" + std::to_string(vocab_.size()) + " entries, " +
                  std::to_string(merges_.size()) + " merges";
  if (unk_id_ >= 0) s += ", unk \"" + json_input::clip(*options_.unk_token) + "\"";
  if (options_.byte_fallback) s += ", byte_fallback";
  if (options_.ignore_merges) s += ", ignore_merges";
  if (!options_.continuing_subword_prefix.empty()) {
    s += ", prefix \"" + json_input::clip(options_.continuing_subword_prefix) + "\"";
  }
  if (!options_.end_of_word_suffix.empty()) {
    s += ", suffix \"" + json_input::clip(options_.end_of_word_suffix) + "\"";
  }
  return s + ")";
}

}  // namespace tessera::model::tokenizers
