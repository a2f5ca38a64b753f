// A WorkLimit (model/tokenizers/work_limit.h) bounds one tokenization: the
// server's per-request CPU budget rides on it (issue 51, class 1's second
// half). For each tokenizer family: a limit that never refuses changes no
// id; one that refuses stops the text within its check interval plus one
// word, and the tokenizer returns its status unchanged.
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include "model/tokenizer.h"
#include "model_test_util.h"

namespace tessera::model {
namespace {

using testing::model_dir;
using testing::source_path;

// Counts through advance() without refusing: the tokenizer's own calls.
class Counter final : public WorkLimit {
 public:
  int checks = 0;

 protected:
  Status check() override {
    ++checks;
    return Status::Ok();
  }
};

// Refuses at its first check.
class Refuse final : public WorkLimit {
 protected:
  Status check() override { return Status(StatusCode::kResourceExhausted, "refused"); }
};

class WorkLimitTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    // "default": the default model's WordPiece (all-MiniLM-L6-v2).
    const std::string dir =
        std::string(GetParam()) == "default" ? model_dir() : source_path(GetParam());
    ASSERT_TRUE(Tokenizer::load(dir, &tok_).ok()) << dir;
  }
  Tokenizer tok_;
};

// Words of every kind, repeated to 1 MB.
std::string long_text() {
  const std::string line = "The quick brown fox, naïve café 東京 — jumps over 12,345 lazy dogs.\n";
  std::string text;
  while (text.size() < (1 << 20)) text += line;
  return text;
}

TEST_P(WorkLimitTest, ALimitThatNeverRefusesChangesNothing) {
  const std::string text = long_text();
  std::vector<TokenSpan> plain, limited;
  ASSERT_TRUE(tok_.tokenize(text, &plain).ok());
  Counter counter;
  ASSERT_TRUE(tok_.tokenize(text, &limited, &counter).ok());
  ASSERT_EQ(plain.size(), limited.size());
  for (size_t i = 0; i < plain.size(); ++i) {
    ASSERT_EQ(plain[i].id, limited[i].id) << i;
    ASSERT_EQ(plain[i].begin, limited[i].begin) << i;
  }
  // Asked about once per 4 KB of the text as the model sees it (byte-level
  // and Metaspace characters are longer than the raw ones), not per word.
  EXPECT_GE(counter.checks, 200);
  EXPECT_LE(counter.checks, 400);
}

TEST_P(WorkLimitTest, ARefusalStopsTheTextAndIsReturnedAsItIs) {
  const std::string text = long_text();
  Refuse refuse;
  std::vector<TokenSpan> out;
  const Status s = tok_.tokenize(text, &out, &refuse);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), "refused");
  EXPECT_TRUE(refuse.stopped());
  EXPECT_TRUE(out.empty());  // asked before the first word
  // encode and encode_pair stop the same way.
  Refuse again;
  EXPECT_EQ(tok_.encode(text, 512, &out, &again).code(), StatusCode::kResourceExhausted);
  Refuse pair;
  EXPECT_EQ(tok_.encode_pair("q", text, 512, &out, nullptr, &pair).code(),
            StatusCode::kResourceExhausted);
}

// A budget half-way through: the tokens made stop near it, not at the end.
TEST_P(WorkLimitTest, StopsWithinOneCheckIntervalOfTheBound) {
  const std::string text = long_text();
  std::vector<TokenSpan> all;
  ASSERT_TRUE(tok_.tokenize(text, &all).ok());

  class Bound final : public WorkLimit {
   public:
    explicit Bound(int max_checks) : max_checks_(max_checks) {}
    int checks = 0;

   protected:
    Status check() override {
      return ++checks > max_checks_ ? Status(StatusCode::kResourceExhausted, "bound")
                                    : Status::Ok();
    }

   private:
    int max_checks_;
  } bound(64);
  std::vector<TokenSpan> part;
  EXPECT_EQ(tok_.tokenize(text, &part, &bound).code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(bound.stopped());
  // 63 intervals of 4 KB passed (the first check is up front): the tokens
  // made cover about 252 KB of the 1 MB text (less where the model's text
  // is longer than the raw one).
  ASSERT_FALSE(part.empty());
  const int64_t reached = part.back().end;
  EXPECT_GT(reached, 150 << 10);
  EXPECT_LT(reached, 300 << 10);
  EXPECT_LT(part.size(), all.size() / 2);
}

// One word of 1 MB (a run of one character): the byte-level BPE word is
// reported whole, so the limit is asked right after it, not only at the end
// of the text.
TEST(WorkLimit, OneLongWordIsAskedAboutBeforeTheNextWord) {
  Tokenizer tok;
  ASSERT_TRUE(Tokenizer::load(source_path("data/models/tiny-qwen3"), &tok).ok());
  const std::string text = std::string(1 << 20, ' ') + "x y z";
  class Nth final : public WorkLimit {
   protected:
    Status check() override {
      return ++checks_ > 1 ? Status(StatusCode::kResourceExhausted, "second check") : Status::Ok();
    }

   private:
    int checks_ = 0;
  } nth;
  std::vector<TokenSpan> out;
  EXPECT_EQ(tok.tokenize(text, &out, &nth).code(), StatusCode::kResourceExhausted);
}

// A WordPiece word over max_input_chars_per_word (100) is [UNK] whole, as in
// HF; past 4 x 100 + 4 bytes its bytes are no longer kept (a 1 MB word held
// 9 MB of scratch and ran at 1.27 of the input's size), and the unknown
// token still spans the whole word, accents included.
TEST(WordPiece, AnOverlongWordIsOneUnknownSpanningIt) {
  Tokenizer tok;
  ASSERT_TRUE(Tokenizer::load(model_dir(), &tok).ok());
  for (const size_t chars : {101, 404, 405, 1 << 20}) {
    std::string word;
    for (size_t i = 0; i < chars; ++i) word += i % 7 == 3 ? "\xc3\xa9" : "a";  // e-acute: 2 bytes
    const std::string text = "x " + word + " y";
    std::vector<TokenSpan> out;
    ASSERT_TRUE(tok.tokenize(text, &out).ok());
    ASSERT_EQ(out.size(), 3u) << chars;
    EXPECT_EQ(out[1].id, tok.unk_id()) << chars;
    EXPECT_EQ(out[1].begin, 2) << chars;
    EXPECT_EQ(out[1].end, static_cast<int64_t>(2 + word.size())) << chars;
    EXPECT_EQ(out[2].begin, static_cast<int64_t>(3 + word.size())) << chars;
  }
}

INSTANTIATE_TEST_SUITE_P(Families, WorkLimitTest,
                         ::testing::Values("default", "data/tokenizer/bpe_qwen3_embedding",
                                           "data/tokenizer/unigram", "data/models/tiny-qwen3",
                                           "data/models/tiny-xlm-roberta"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           name = name.substr(name.rfind('/') + 1);
                           for (char& c : name) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace tessera::model
