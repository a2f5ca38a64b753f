// Windows framed through the tokenizer's single template, whatever its
// shape: BERT's [CLS] $A [SEP] (all-MiniLM-L6-v2), RoBERTa's <s> $A </s>
// (data/tokenizer/bpe as committed), and from that byte-level BPE
// tokenizer.json with its post_processor swapped: a decoder's
// "$A <|endoftext|>" (Qwen3-Embedding: nothing before the text, one special
// after it), a bare "$A" (no specials) and two specials before the text.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/tokenizer.h"
#include "pipeline/windowing.h"
#include "temp_dir.h"

namespace tessera::pipeline {
namespace {

using nlohmann::json;

constexpr int32_t kEndOfText = 4000;  // one past the committed BPE vocabulary

json read_json(const std::string& path) {
  std::ifstream f(path);
  return json::parse(std::string(std::istreambuf_iterator<char>(f), {}));
}

json piece(const char* kind, const char* id) { return {{kind, {{"id", id}, {"type_id", 0}}}}; }
json special_entry(const char* name, int32_t id) {
  return {{"id", name}, {"ids", {id}}, {"tokens", {name}}};
}

// The committed byte-level BPE tokenizer.json with <|endoftext|> added and
// a TemplateProcessing post-processor of `single` (the pair: single, then
// $B and single's suffix).
json bpe_with_template(const std::vector<std::string>& single) {
  json j = read_json(std::string(TESSERA_SOURCE_DIR) + "/data/tokenizer/bpe/tokenizer.json");
  j["added_tokens"].push_back({{"id", kEndOfText},
                               {"content", "<|endoftext|>"},
                               {"single_word", false},
                               {"lstrip", false},
                               {"rstrip", false},
                               {"normalized", false},
                               {"special", true}});
  json s = json::array(), pair = json::array();
  for (const std::string& p : single)
    s.push_back(piece(p == "$A" ? "Sequence" : "SpecialToken", p == "$A" ? "A" : p.c_str()));
  pair = s;
  pair.push_back(piece("Sequence", "B"));
  json specials = json::object();
  specials["<|endoftext|>"] = special_entry("<|endoftext|>", kEndOfText);
  specials["<s>"] = special_entry("<s>", 0);
  specials["<mask>"] = special_entry("<mask>", 4);
  j["post_processor"] = {
      {"type", "TemplateProcessing"}, {"single", s}, {"pair", pair}, {"special_tokens", specials}};
  return j;
}

struct Shape {
  const char* name;
  std::vector<int32_t> prefix, suffix;
};

class Framing : public ::testing::Test {
 protected:
  model::Tokenizer load(const json& j) {
    model::Tokenizer tok;
    const Status s = model::Tokenizer::load(
        std::filesystem::path(dir_.write("tokenizer.json", j.dump())).parent_path().string(), &tok);
    EXPECT_TRUE(s.ok()) << s.to_string();
    return tok;
  }
  pipeline::testing::TempDir dir_;
};

// ~70 tokens of plain words and sentences.
const char* const kText =
    "Long documents are split into overlapping windows. Each window is framed the way the "
    "model's tokenizer frames one text, with its own special tokens before and after it, "
    "so a window that holds the whole text is the very sequence the tokenizer would give.";

void check_shape(const model::Tokenizer& tok, const Shape& shape) {
  SCOPED_TRACE(shape.name);
  const model::SequenceFrame& frame = tok.frame();
  EXPECT_EQ(frame.prefix, shape.prefix);
  EXPECT_EQ(frame.suffix, shape.suffix);
  const int specials = frame.specials();
  std::vector<model::TokenSpan> tokens;
  ASSERT_TRUE(tok.tokenize(kText, &tokens).ok());
  const auto n = static_cast<int64_t>(tokens.size());
  ASSERT_GT(n, 40);

  // The whole text in one window is the tokenizer's own single template.
  std::vector<model::TokenSpan> encoded;
  ASSERT_TRUE(tok.encode(kText, 1 << 20, &encoded).ok());
  std::vector<int32_t> want, seq;
  for (const auto& t : encoded) want.push_back(t.id);
  frame_window(tokens, {0, n}, frame, &seq);
  EXPECT_EQ(seq, want);

  for (int max_tokens : {specials + 1, specials + 2, 16, 33}) {
    const WindowOptions opt{max_tokens, std::min(4, max_tokens - specials - 1), specials};
    ASSERT_TRUE(check_window_options(opt).ok()) << max_tokens;
    const int64_t content = max_tokens - specials;
    // Words only (no better boundary to end early on): every window but the
    // last holds exactly max_tokens - specials tokens of text.
    const std::vector<Window> windows = plan_windows(n, opt);
    ASSERT_GT(windows.size(), 1u);
    for (size_t i = 0; i < windows.size(); ++i) {
      const Window& w = windows[i];
      if (i + 1 < windows.size()) {
        EXPECT_EQ(w.end - w.begin, content) << max_tokens;
      }
      frame_window(tokens, w, frame, &seq);
      ASSERT_EQ(static_cast<int64_t>(seq.size()), w.end - w.begin + specials);
      EXPECT_LE(static_cast<int64_t>(seq.size()), max_tokens);
      EXPECT_TRUE(std::equal(frame.prefix.begin(), frame.prefix.end(), seq.begin()));
      EXPECT_TRUE(std::equal(frame.suffix.rbegin(), frame.suffix.rend(), seq.rbegin()));
      EXPECT_EQ(seq[frame.prefix.size()], tokens[w.begin].id);  // content right after the prefix
      EXPECT_EQ(seq[seq.size() - frame.suffix.size() - 1], tokens[w.end - 1].id);
    }
  }
}

TEST_F(Framing, BertAndRobertaKeepTheirTwoSpecials) {
  model::Tokenizer bert;
  ASSERT_TRUE(
      model::Tokenizer::load(std::string(TESSERA_SOURCE_DIR) + "/models/all-MiniLM-L6-v2", &bert)
          .ok());
  check_shape(bert, {"bert", {101}, {102}});
  EXPECT_EQ(bert.cls_id(), 101);
  EXPECT_EQ(bert.sep_id(), 102);
  check_shape(
      load(read_json(std::string(TESSERA_SOURCE_DIR) + "/data/tokenizer/bpe/tokenizer.json")),
      {"roberta", {0}, {2}});
}

TEST_F(Framing, DecoderTemplateEndsWithItsOneSpecial) {
  const model::Tokenizer tok = load(bpe_with_template({"$A", "<|endoftext|>"}));
  check_shape(tok, {"$A <|endoftext|>", {}, {kEndOfText}});
  // The window is max_tokens - 1 tokens of text, then <|endoftext|>.
  std::vector<model::TokenSpan> tokens;
  ASSERT_TRUE(tok.tokenize(kText, &tokens).ok());
  const std::vector<Window> windows = plan_windows(static_cast<int64_t>(tokens.size()), {8, 2, 1});
  std::vector<int32_t> seq;
  frame_window(tokens, windows[0], tok.frame(), &seq);
  ASSERT_EQ(seq.size(), 8u);
  EXPECT_EQ(seq.front(), tokens[0].id);
  EXPECT_EQ(seq.back(), kEndOfText);
  EXPECT_EQ(windows[1].begin, 5);  // 7 tokens of text, the last 2 shared
  const std::string d = tok.describe();
  EXPECT_NE(d.find("before the text none, after it \"<|endoftext|>\" = 4000"), std::string::npos)
      << d;
}

TEST_F(Framing, BareTemplateAddsNothing) {
  const model::Tokenizer tok = load(bpe_with_template({"$A"}));
  check_shape(tok, {"$A", {}, {}});
  EXPECT_EQ(tok.cls_id(), -1);
  EXPECT_EQ(tok.sep_id(), -1);
  std::vector<model::TokenSpan> tokens;
  ASSERT_TRUE(tok.tokenize(kText, &tokens).ok());
  std::vector<int32_t> seq;
  frame_window(tokens, plan_windows(static_cast<int64_t>(tokens.size()), {6, 0, 0})[1], tok.frame(),
               &seq);
  EXPECT_EQ(seq, (std::vector<int32_t>{tokens[6].id, tokens[7].id, tokens[8].id, tokens[9].id,
                                       tokens[10].id, tokens[11].id}));
}

TEST_F(Framing, SeveralSpecialsOnOneSide) {
  const model::Tokenizer tok = load(bpe_with_template({"<s>", "<mask>", "$A", "<|endoftext|>"}));
  check_shape(tok, {"<s> <mask> $A <|endoftext|>", {0, 4}, {kEndOfText}});
}

TEST_F(Framing, TemplateWithoutExactlyOneTextIsRefused) {
  for (const std::vector<std::string>& single :
       {std::vector<std::string>{"<s>", "<|endoftext|>"}, {"$A", "<s>", "$A"}}) {
    model::Tokenizer tok;
    const Status s = model::Tokenizer::load(
        std::filesystem::path(dir_.write("tokenizer.json", bpe_with_template(single).dump()))
            .parent_path()
            .string(),
        &tok);
    EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.to_string();
    EXPECT_NE(s.message().find("post_processor.single"), std::string::npos) << s.message();
  }
}

TEST(WindowOptionsSpecials, MessagesCountTheModelsSpecials) {
  Status s = check_window_options({1, 0, 1});
  EXPECT_NE(s.message().find("max_tokens = 1: must be at least 2 (one token; the model adds 1 "
                             "special token to each)"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(check_window_options({1, 0, 0}).ok());
  s = check_window_options({0, 0, 0});
  EXPECT_NE(s.message().find("at least 1 (one token; the model adds no special tokens"),
            std::string::npos)
      << s.message();
  s = check_window_options({10, 9, 1});
  EXPECT_NE(s.message().find("stride = 9: must be in [0, 9) (a window of 10 tokens holds "
                             "9 tokens of text; the model adds 1 special token to each)"),
            std::string::npos)
      << s.message();
  s = check_window_options({10, 8, 2});
  EXPECT_NE(s.message().find("[0, 8)"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace tessera::pipeline
