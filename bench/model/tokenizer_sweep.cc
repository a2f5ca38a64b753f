// Tokenizer cost against input length (issue 51: hostile input finds
// superlinear paths): one repeated character, from 1 KB to a few MB, per
// tokenizer folder; prints one JSON line per (folder, character, bytes) with
// the median seconds of `tokenize` and the token count.
//
// Usage: tokenizer_sweep [--max-bytes N] [--repeats R] CHAR DIR...
// CHAR is the character repeated (" ", "a", "\u00e9"...), as UTF-8.
// bench/tokenizer_sweep.py runs it per family beside HF `tokenizers` and
// fits the exponent.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "model/tokenizer.h"

namespace {

double seconds_to_tokenize(const tessera::model::Tokenizer& t, const std::string& text,
                           size_t* tokens) {
  std::vector<tessera::model::TokenSpan> out;
  const auto start = std::chrono::steady_clock::now();
  const tessera::Status s = t.tokenize(text, &out);
  const auto end = std::chrono::steady_clock::now();
  if (!s.ok()) {
    std::fprintf(stderr, "tokenizer_sweep: %s\n", s.message().c_str());
    std::exit(1);
  }
  *tokens = out.size();
  return std::chrono::duration<double>(end - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  size_t max_bytes = size_t{1} << 20;
  int repeats = 3;
  int i = 1;
  for (; i + 1 < argc && argv[i][0] == '-' && argv[i][1] == '-'; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--max-bytes") {
      max_bytes = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (flag == "--repeats") {
      repeats = std::max(1, std::atoi(argv[i + 1]));
    } else {
      std::fprintf(stderr, "tokenizer_sweep: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (argc - i < 2) {
    std::fprintf(stderr, "usage: tokenizer_sweep [--max-bytes N] [--repeats R] CHAR DIR...\n");
    return 2;
  }
  const std::string unit = argv[i++];
  for (; i < argc; ++i) {
    tessera::model::Tokenizer t;
    if (tessera::Status s = tessera::model::Tokenizer::load(argv[i], &t); !s.ok()) {
      std::fprintf(stderr, "tokenizer_sweep: %s\n", s.message().c_str());
      return 1;
    }
    for (size_t bytes = 1024; bytes <= max_bytes; bytes *= 4) {
      std::string text;
      while (text.size() + unit.size() <= bytes) text += unit;
      std::vector<double> times;
      size_t tokens = 0;
      for (int r = 0; r < repeats; ++r) times.push_back(seconds_to_tokenize(t, text, &tokens));
      std::sort(times.begin(), times.end());
      std::printf("{\"dir\": \"%s\", \"bytes\": %zu, \"seconds\": %.6f, \"tokens\": %zu}\n",
                  argv[i], text.size(), times[times.size() / 2], tokens);
      std::fflush(stdout);
    }
  }
  return 0;
}
