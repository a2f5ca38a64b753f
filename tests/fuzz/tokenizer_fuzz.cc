// Fuzz target: the tokenizer files of a model directory. The first byte picks
// the file (even: tokenizer.json, odd: vocab.txt), the rest is its content.
// A tokenizer that loads must then tokenize and encode a fixed text.
#include <cstdint>
#include <string>
#include <vector>

#include "model/tokenizer.h"
#include "scratch_dir.h"

namespace {
// ASCII, accents, CJK, an added token and punctuation: every path of the
// normalizer and the pre-tokenizer.
constexpr char kText[] = "Hello, World! Caf\xc3\xa9 na\xc3\xafve \xe6\x9d\xb1\xe4\xba\xac [SEP] x";
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
  (void)tokenizer.tokenize(kText, &tokens);
  (void)tokenizer.encode(kText, 8, &tokens);
  return 0;
}
