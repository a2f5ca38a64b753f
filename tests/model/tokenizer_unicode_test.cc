// Every code point through the BERT normalizer and the pre-tokenizer's
// character classes, against what HF `tokenizers` does to it
// (data/tokenizer/unicode_golden.json, from tools/make_tokenizer_golden.py).
// This pins the Unicode-version choices of model/tokenizer_unicode.cc.
#include "model/tokenizer_unicode.h"

#include <gtest/gtest.h>
#include <unicode/uchar.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/tokenizer_utf8.h"
#include "model/tokenizers/wordpiece/bert_normalizer.h"

namespace tessera::model {
namespace {

using nlohmann::json;

constexpr char32_t kMaxCodePoint = 0x10FFFF;
constexpr char32_t kHangulFirst = 0xAC00, kHangulLast = 0xD7A3;

bool is_surrogate(char32_t c) { return c >= 0xD800 && c <= 0xDFFF; }

std::string utf8(const std::u32string& s) {
  std::string out;
  char buf[4];
  for (char32_t c : s) out.append(buf, encode_utf8(c, buf));
  return out;
}

// A table over all code points from the golden file's [[first, last], ...].
std::vector<bool> from_ranges(const json& ranges) {
  std::vector<bool> in(kMaxCodePoint + 1, false);
  for (const auto& r : ranges) {
    for (uint32_t c = r[0]; c <= r[1].get<uint32_t>(); ++c) in[c] = true;
  }
  return in;
}

// Hangul syllables decompose by the algorithm of Unicode ch. 3.12 (the golden
// file leaves them out to stay small); lowercase leaves jamo unchanged.
std::u32string hangul_nfd(char32_t c) {
  const char32_t s = c - kHangulFirst;
  std::u32string out = {0x1100 + s / (21 * 28), 0x1161 + (s % (21 * 28)) / 28};
  if (s % 28 != 0) out.push_back(0x11A7 + s % 28);
  return out;
}

// ICU's Unicode (15.0 for ICU 72) does not know code points that Rust's
// newer std lowercases (Unicode 16 scripts); those cannot match.
bool unknown_to_icu(char32_t c) { return u_charType(static_cast<UChar32>(c)) == U_UNASSIGNED; }

json read_golden() {
  std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/data/tokenizer/unicode_golden.json");
  EXPECT_TRUE(in.good()) << "data/tokenizer/unicode_golden.json is missing";
  return json::parse(in);
}

TEST(TokenizerUnicode, NormalizerMatchesHfOnEveryCodePoint) {
  const json golden = read_golden();
  const json& o = golden["normalizer"];
  BertNormalizerOptions options{o["clean_text"], o["handle_chinese_chars"], o["lowercase"],
                                o["lowercase"]};
  if (!o["strip_accents"].is_null()) options.strip_accents = o["strip_accents"];
  const BertNormalizer normalizer(options);
  const std::vector<bool> removed = from_ranges(golden["removed"]);
  const std::vector<bool> to_space = from_ranges(golden["to_space"]);
  const std::vector<bool> cjk = from_ranges(golden["cjk_spaced"]);
  const json& mapped = golden["normalized"];

  int mismatches = 0, unknown = 0;
  NormalizedChar n;
  for (char32_t c = 0; c <= kMaxCodePoint; ++c) {
    if (is_surrogate(c)) continue;
    std::string want;
    if (removed[c]) {
      want = "";
    } else if (to_space[c]) {
      want = " ";
    } else if (cjk[c]) {
      want = " " + utf8({c}) + " ";
    } else if (const auto it = mapped.find(std::to_string(c)); it != mapped.end()) {
      want = it->get<std::string>();
    } else if (c >= kHangulFirst && c <= kHangulLast && options.strip_accents) {
      want = utf8(hangul_nfd(c));
    } else {
      want = utf8({c});
    }
    normalizer.normalize(c, &n);
    std::string got = utf8(std::u32string(n.cp, n.cp + n.count));
    if (n.isolated) got = " " + got + " ";
    if (got == want) continue;
    if (unknown_to_icu(c)) {
      ++unknown;
      continue;
    }
    if (++mismatches <= 20) {
      ADD_FAILURE() << "U+" << std::hex << uint32_t(c) << ": tessera " << json(got).dump()
                    << ", HF " << json(want).dump();
    }
  }
  EXPECT_EQ(mismatches, 0);
  // Only characters newer than ICU's Unicode may differ; keep them few.
  EXPECT_LE(unknown, 64) << "code points unknown to ICU that HF normalizes differently";
}

TEST(TokenizerUnicode, PreTokenizerClassesMatchHfOnEveryCodePoint) {
  const json golden = read_golden();
  const std::vector<bool> whitespace = from_ranges(golden["pretokenizer_whitespace"]);
  const std::vector<bool> punctuation = from_ranges(golden["pretokenizer_punctuation"]);
  int mismatches = 0;
  for (char32_t c = 0; c <= kMaxCodePoint; ++c) {
    if (is_surrogate(c)) continue;
    const bool ws = unicode::is_whitespace(c);
    const bool punct = !ws && unicode::is_punctuation(c);
    if (ws != whitespace[c] || punct != punctuation[c]) {
      if (++mismatches <= 20) {
        ADD_FAILURE() << "U+" << std::hex << uint32_t(c) << ": tessera whitespace " << ws
                      << " punctuation " << punct << ", HF " << whitespace[c] << " "
                      << punctuation[c];
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(TokenizerUnicode, ExpansionsFitTheBuffers) {
  char32_t buf[unicode::kMaxDecomposition];
  int longest_nfd = 0, longest_lower = 0;
  for (char32_t c = 0; c <= kMaxCodePoint; ++c) {
    if (is_surrogate(c)) continue;
    longest_nfd = std::max(longest_nfd, unicode::decompose(c, buf));
    longest_lower = std::max(longest_lower, unicode::to_lower(c, buf));
  }
  // decompose / to_lower stop at the buffer size; a longer expansion would be
  // silently cut, so the longest must stay strictly below the limits' reach.
  EXPECT_LT(longest_nfd, unicode::kMaxDecomposition);
  EXPECT_LT(longest_lower, unicode::kMaxLowercase);
}

}  // namespace
}  // namespace tessera::model
