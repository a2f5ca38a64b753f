// Fuzz target: the tokenizer files of a model directory. The first byte picks
// the file (even: tokenizer.json, odd: vocab.txt), the rest is its content.
// A tokenizer that loads (any model folder: WordPiece, BPE, Unigram, with the
// shared normalizer / pre-tokenizer / post-processor / decoder steps) must
// then tokenize, encode, encode a pair, decode what it encoded and describe
// itself; then tokenize long texts (a 16 KB run of one character, and the
// input itself four times over) under fuzz-smoke.sh's per-input time limit,
// so that a superlinear path of a hostile file (issue 51: a quadratic merge,
// a backtracking regex, an expanding normalizer) fails as a timeout rather
// than passing on a short text.
#include <cstdint>
#include <string>
#include <vector>

#include "model/tokenizer.h"
#include "scratch_dir.h"

namespace {
// ASCII, accents (precomposed and combining), CJK, fullwidth, an added token,
// the Metaspace mark, spaces runs and punctuation: every path of the
// normalizers and the pre-tokenizers.
constexpr char kText[] =
    "Hello, World! Caf\xc3\xa9 na\xc3\xafve e\xcc\x81 \xe6\x9d\xb1\xe4\xba\xac [SEP] x"
    "  <mask>  \xe2\x96\x81hello \xef\xbc\xa1 ``q`` \xef\xac\x81";
constexpr char kPair[] = "world  w\xcc\xb6\xcc\xa1orld";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  auto& scratch = tessera::fuzz::ScratchDir::get();
  const bool json = data[0] % 2 == 0;
  const std::string dir = json ? "json" : "vocab";
  scratch.write(dir + (json ? "/tokenizer.json" : "/vocab.txt"),
                tessera::fuzz::as_text(data + 1, size - 1));
  tessera::model::Tokenizer tokenizer;
  if (!tessera::model::Tokenizer::load(scratch.path() + "/" + dir, &tokenizer).ok()) return 0;
  std::vector<tessera::model::TokenSpan> tokens;
  std::vector<int32_t> type_ids;
  (void)tokenizer.tokenize(kText, &tokens);
  (void)tokenizer.encode(kText, 8, &tokens);
  (void)tokenizer.encode_pair(kText, kPair, 12, &tokens, &type_ids);
  std::vector<int64_t> ids;
  for (const auto& t : tokens) ids.push_back(t.id);
  std::string text;
  size_t bad = 0;
  (void)tokenizer.decode(ids, false, &text, &bad);
  (void)tokenizer.decode(ids, true, &text, &bad);
  (void)tokenizer.describe();
  // Runs of one character are single words for most pre-tokenizers: the
  // paths whose cost grows with a word's length.
  for (const char c : {' ', 'a', static_cast<char>(0x20 + data[0] % 0x5f)}) {
    (void)tokenizer.tokenize(std::string(16384, c), &tokens);
  }
  std::string repeated;
  for (int i = 0; i < 4; ++i) repeated += tessera::fuzz::as_text(data + 1, size - 1);
  (void)tokenizer.tokenize(repeated, &tokens);
  return 0;
}
