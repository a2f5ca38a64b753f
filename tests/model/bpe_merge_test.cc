// BpeModel's merge loop (a heap over a linked list of symbols, issue 51)
// against the rule written out as plainly as it reads in HF `tokenizers`:
// merge the adjacent pair of lowest rank, the leftmost among equals, until no
// pair has a merge. Random vocabularies and words over a small alphabet, so
// ties, chains and stale heap entries are common; then a long run of one
// character, the input whose cost was quadratic.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "model/tokenizers/bpe/bpe_model.h"

namespace tessera::model::tokenizers {
namespace {

using Merges = std::vector<std::pair<std::string, std::string>>;

struct Bpe {
  std::unique_ptr<const WordModel> model;
  std::map<std::string, int32_t> vocab;
  Merges merges;
};

// Single characters a..c, then merges of random pairs of known tokens.
Bpe random_bpe(std::mt19937& rng, int merges) {
  Bpe b;
  std::vector<std::string> tokens = {"a", "b", "c"};
  std::map<std::pair<std::string, std::string>, bool> seen;
  for (int i = 0; i < merges; ++i) {
    const std::string& x = tokens[rng() % tokens.size()];
    const std::string& y = tokens[rng() % tokens.size()];
    if (x.size() + y.size() > 8 || seen[{x, y}]) continue;
    seen[{x, y}] = true;
    b.merges.emplace_back(x, y);
    if (std::find(tokens.begin(), tokens.end(), x + y) == tokens.end()) tokens.push_back(x + y);
  }
  std::vector<std::pair<std::string, int32_t>> vocab;
  for (size_t i = 0; i < tokens.size(); ++i) {
    vocab.emplace_back(tokens[i], static_cast<int32_t>(i));
    b.vocab[tokens[i]] = static_cast<int32_t>(i);
  }
  const Status s = BpeModel::create(vocab, b.merges, BpeOptions{}, "test", &b.model);
  EXPECT_TRUE(s.ok()) << s.message();
  return b;
}

// The rule, one scan per merge.
std::vector<std::string> plain_bpe(const Bpe& b, const std::string& word) {
  std::vector<std::string> symbols;
  for (char c : word) symbols.emplace_back(1, c);
  std::map<std::pair<std::string, std::string>, size_t> rank;
  for (size_t i = 0; i < b.merges.size(); ++i) rank.emplace(b.merges[i], i);
  for (;;) {
    size_t best = symbols.size(), best_rank = SIZE_MAX;
    for (size_t i = 0; i + 1 < symbols.size(); ++i) {
      const auto it = rank.find({symbols[i], symbols[i + 1]});
      if (it != rank.end() && it->second < best_rank) {
        best = i;
        best_rank = it->second;
      }
    }
    if (best == symbols.size()) return symbols;
    symbols[best] += symbols[best + 1];
    symbols.erase(symbols.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
}

std::vector<std::string> tokens_of(const Bpe& b, const std::string& word) {
  std::vector<WordModel::Piece> pieces;
  b.model->tokenize(word, &pieces);
  std::vector<std::string> out;
  size_t at = 0;
  for (const auto& p : pieces) {
    EXPECT_EQ(p.begin, at) << word;  // the pieces tile the word
    at = p.end;
    const std::string text = word.substr(p.begin, p.end - p.begin);
    EXPECT_EQ(b.vocab.at(text), p.id) << text;
    out.push_back(text);
  }
  EXPECT_EQ(at, word.size()) << word;
  return out;
}

TEST(BpeMerge, EqualsTheRuleOnRandomVocabulariesAndWords) {
  std::mt19937 rng(47);
  for (int v = 0; v < 40; ++v) {
    const Bpe b = random_bpe(rng, 30);
    for (int w = 0; w < 50; ++w) {
      std::string word(1 + rng() % 40, 'a');
      for (char& c : word) c = static_cast<char>('a' + rng() % 3);
      ASSERT_EQ(tokens_of(b, word), plain_bpe(b, word)) << "vocabulary " << v << ", " << word;
    }
  }
}

TEST(BpeMerge, ALongRunOfOneCharacterMergesAsTheRuleDoes) {
  // "a a" -> "aa", "aa aa" -> "aaaa", "aaaa aaaa": 200k a's become 25k tokens
  // of 8; with the scan per merge this was ~2e10 steps.
  std::vector<std::pair<std::string, int32_t>> vocab = {
      {"a", 0}, {"aa", 1}, {"aaaa", 2}, {"aaaaaaaa", 3}};
  const Merges merges = {{"a", "a"}, {"aa", "aa"}, {"aaaa", "aaaa"}};
  std::unique_ptr<const WordModel> model;
  ASSERT_TRUE(BpeModel::create(vocab, merges, BpeOptions{}, "test", &model).ok());
  std::vector<WordModel::Piece> pieces;
  model->tokenize(std::string(200003, 'a'), &pieces);
  ASSERT_EQ(pieces.size(), 25000u + 2u);  // 25,000 x 8, then "aa" and "a"
  EXPECT_EQ(pieces[0].id, 3);
  EXPECT_EQ(pieces[24999].id, 3);
  EXPECT_EQ(pieces[25000].id, 1);
  EXPECT_EQ(pieces[25001].id, 0);
  EXPECT_EQ(pieces.back().end, 200003u);
}

}  // namespace
}  // namespace tessera::model::tokenizers
