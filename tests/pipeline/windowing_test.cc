#include "pipeline/windowing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "model/tokenizer.h"

namespace tessera::pipeline {
namespace {

TEST(Windowing, ShortDocumentIsOneWindow) {
  const WindowOptions opt{10, 3};  // 8 content tokens per window
  for (int64_t n = 1; n <= 8; ++n) {
    const auto w = plan_windows(n, opt);
    ASSERT_EQ(w.size(), 1u) << n;
    EXPECT_EQ(w[0].begin, 0);
    EXPECT_EQ(w[0].end, n);
  }
  EXPECT_TRUE(plan_windows(0, opt).empty());
}

TEST(Windowing, WindowsCoverEveryTokenAndOverlapByStride) {
  for (int max_tokens : {3, 4, 7, 16, 258}) {
    for (int stride = 0; stride < max_tokens - 2; ++stride) {
      const WindowOptions opt{max_tokens, stride};
      ASSERT_TRUE(check_window_options(opt).ok());
      for (int64_t n : {1, 2, 5, 17, 64, 255, 256, 257, 1000}) {
        const auto w = plan_windows(n, opt);
        const std::string where = "max_tokens=" + std::to_string(max_tokens) +
                                  " stride=" + std::to_string(stride) + " n=" + std::to_string(n);
        ASSERT_FALSE(w.empty()) << where;
        EXPECT_EQ(w.front().begin, 0) << where;
        EXPECT_EQ(w.back().end, n) << where;
        std::vector<int> covered(n, 0);
        for (size_t i = 0; i < w.size(); ++i) {
          EXPECT_LT(w[i].begin, w[i].end) << where;
          EXPECT_LE(w[i].end - w[i].begin, max_tokens - 2) << where;
          for (int64_t t = w[i].begin; t < w[i].end; ++t) ++covered[t];
          if (i > 0) {
            EXPECT_EQ(w[i - 1].end - w[i].begin, stride) << where << " window " << i;
            EXPECT_EQ(w[i - 1].end - w[i - 1].begin, max_tokens - 2)
                << where << ": only the last window may be short";
          }
        }
        for (int64_t t = 0; t < n; ++t) ASSERT_GE(covered[t], 1) << where << " token " << t;
      }
    }
  }
}

TEST(Windowing, ExampleWithTheDefaults) {
  // 256-token model, stride 32: 254 content tokens, step 222.
  const auto w = plan_windows(600, WindowOptions{256, 32});
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].begin, 0);
  EXPECT_EQ(w[0].end, 254);
  EXPECT_EQ(w[1].begin, 222);
  EXPECT_EQ(w[1].end, 476);
  EXPECT_EQ(w[2].begin, 444);
  EXPECT_EQ(w[2].end, 600);
}

TEST(Windowing, RejectsOptionsNamingTheOption) {
  Status s = check_window_options({2, 0});
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.option(), "max_tokens");
  EXPECT_EQ(s.message().rfind("max_tokens = 2", 0), 0u) << s.message();
  s = check_window_options({10, 8});
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.option(), "stride");
  EXPECT_EQ(s.message().rfind("stride = 8", 0), 0u) << s.message();
  EXPECT_FALSE(check_window_options({10, -1}).ok());
  EXPECT_TRUE(check_window_options({10, 7}).ok());
}

}  // namespace
}  // namespace tessera::pipeline

// Chunk boundaries on real text: data/long (tools/make_long_documents.py:
// prose, code, lists, numbers, CJK, Cyrillic, Greek, Arabic, Devanagari,
// Hangul, emoji) through the default model's tokenizer.
namespace tessera::pipeline {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

class LongDocuments : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string source = TESSERA_SOURCE_DIR;
    tokenizer_ = new model::Tokenizer();
    const Status s = model::Tokenizer::load(source + "/models/all-MiniLM-L6-v2", tokenizer_);
    ASSERT_TRUE(s.ok()) << s.to_string();
    for (int i = 0; i < 20; ++i) {
      char name[32];
      std::snprintf(name, sizeof(name), "/data/long/doc%02d.txt", i);
      docs_.push_back(read_file(source + name));
      ASSERT_GT(docs_.back().size(), 5000u) << name;
    }
  }
  static void TearDownTestSuite() { delete tokenizer_; }
  static std::vector<int32_t> ids(std::string_view text) {
    std::vector<model::TokenSpan> spans;
    EXPECT_TRUE(tokenizer_->tokenize(text, &spans).ok());
    std::vector<int32_t> out;
    for (const auto& s : spans) out.push_back(s.id);
    return out;
  }
  static inline model::Tokenizer* tokenizer_ = nullptr;
  static inline std::vector<std::string> docs_;
};

TEST_F(LongDocuments, WindowsCutBetweenWordsAndTheirTextGivesTheirTokens) {
  int64_t windows_checked = 0, continuations = 0;
  for (const WindowOptions opt : {WindowOptions{256, 32}, WindowOptions{128, 16},
                                  WindowOptions{40, 8}, WindowOptions{24, 0}}) {
    for (size_t d = 0; d < docs_.size(); ++d) {
      const std::string& text = docs_[d];
      std::vector<model::TokenSpan> tokens;
      ASSERT_TRUE(tokenizer_->tokenize(text, &tokens).ok());
      for (const auto& t : tokens) continuations += t.continues_word;
      const auto w = plan_windows(tokens, text, opt);
      const auto n = static_cast<int64_t>(tokens.size());
      const std::string where = "doc" + std::to_string(d) + " max_tokens " +
                                std::to_string(opt.max_tokens) + " stride " +
                                std::to_string(opt.stride);
      ASSERT_FALSE(w.empty()) << where;
      EXPECT_EQ(w.front().begin, 0) << where;
      EXPECT_EQ(w.back().end, n) << where;
      for (size_t i = 0; i < w.size(); ++i) {
        ASSERT_LT(w[i].begin, w[i].end) << where;
        ASSERT_LE(w[i].end - w[i].begin, opt.max_tokens - 2) << where;
        EXPECT_FALSE(tokens[w[i].begin].continues_word) << where << " window " << i << " begins";
        if (w[i].end < n) {
          EXPECT_FALSE(tokens[w[i].end].continues_word) << where << " window " << i << " ends";
        }
        if (i > 0) {
          EXPECT_GT(w[i].begin, w[i - 1].begin) << where;
          EXPECT_LE(w[i].begin, w[i - 1].end) << where << ": a gap before window " << i;
          EXPECT_LE(w[i - 1].end - w[i].begin, opt.stride) << where << " window " << i;
        }
        // The chunk's own text (what its offsets name) tokenizes to its tokens.
        const int64_t b = tokens[w[i].begin].begin, e = tokens[w[i].end - 1].end;
        const std::vector<int32_t> expect([&] {
          std::vector<int32_t> v;
          for (int64_t t = w[i].begin; t < w[i].end; ++t) v.push_back(tokens[t].id);
          return v;
        }());
        ASSERT_EQ(ids(std::string_view(text).substr(b, e - b)), expect)
            << where << " window " << i
            << " text: " << text.substr(b, std::min<int64_t>(e - b, 80));
        ++windows_checked;
      }
    }
  }
  EXPECT_GT(continuations, 1000) << "the documents must exercise '##' pieces";
  std::printf("checked %lld windows; %lld continuation pieces in the documents\n",
              static_cast<long long>(windows_checked), static_cast<long long>(continuations));
}

TEST_F(LongDocuments, WindowsEndOnSentenceLineOrParagraphWhenOneIsInReach) {
  const WindowOptions opt{128, 32};
  int64_t ends = 0, in_reach = 0, structured = 0;
  for (const std::string& text : docs_) {
    std::vector<model::TokenSpan> tokens;
    ASSERT_TRUE(tokenizer_->tokenize(text, &tokens).ok());
    const auto n = static_cast<int64_t>(tokens.size());
    const auto w = plan_windows(tokens, text, opt);
    for (size_t i = 0; i + 1 < w.size(); ++i) {
      const int64_t limit = std::min(w[i].begin + opt.max_tokens - 2, n);
      // Ends may move back by up to `stride` tokens (not to or before the
      // previous window's end) for a better boundary.
      const int64_t lowest = std::max(i > 0 ? w[i - 1].end + 1 : 1, limit - opt.stride);
      Cut best = Cut::kInsideWord;
      for (int64_t t = lowest; t <= limit; ++t) best = std::max(best, cut_before(tokens, text, t));
      ++ends;
      if (best < Cut::kSentence) continue;
      ++in_reach;
      EXPECT_EQ(cut_before(tokens, text, w[i].end), best) << "window " << i;
      structured += cut_before(tokens, text, w[i].end) >= Cut::kSentence;
    }
  }
  std::printf(
      "%lld window ends: %lld had a sentence, line or paragraph boundary within reach, "
      "%lld ended on one\n",
      static_cast<long long>(ends), static_cast<long long>(in_reach),
      static_cast<long long>(structured));
  EXPECT_EQ(structured, in_reach);
  EXPECT_GT(in_reach * 2, ends) << "the documents must exercise the preference";
}

TEST(Windowing, AWordLongerThanTheWindowIsCutInside) {
  // One word of 10 pieces and a window of 4 content tokens: cut anyway.
  std::vector<model::TokenSpan> tokens;
  for (int i = 0; i < 10; ++i) tokens.push_back({i, i, i + 1, /*continues_word=*/i > 0});
  const auto w = plan_windows(tokens, "abcdefghij", {6, 1});
  ASSERT_FALSE(w.empty());
  EXPECT_EQ(w.back().end, 10);
  for (const Window& x : w) EXPECT_LE(x.end - x.begin, 4);
}

TEST(Windowing, PrefersTheParagraphBreakInsideTheOverlap) {
  // "a b c d e f\n\ng h i j k l": 12 words; windows of 8 tokens, stride 4.
  const std::string text = "a b c d e f\n\ng h i j k l";
  std::vector<model::TokenSpan> tokens;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != ' ' && text[i] != '\n') tokens.push_back({0, int64_t(i), int64_t(i) + 1});
  }
  const auto w = plan_windows(tokens, text, {10, 4});
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].begin, 0);
  EXPECT_EQ(w[0].end, 6);    // ends at the paragraph, not at the full 8
  EXPECT_EQ(w[1].begin, 2);  // overlap of 4 (no better cut inside it)
  EXPECT_EQ(w[1].end, 10);
  EXPECT_EQ(w[2].begin, 6);  // the paragraph is inside this overlap: start on it
  EXPECT_EQ(w[2].end, 12);
}

}  // namespace
}  // namespace tessera::pipeline
