// Decoding against HF `tokenizers`: every id list of the committed golden
// (data/tokenizer/decode_golden.jsonl, made by tools/make_decode_golden.py)
// with and without special tokens, from tokenizer.json and from the vocab.txt
// fallback; the cleanup rules one by one; unknown ids; decoder variants.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "model/tokenizer.h"
#include "model/wordpiece_decoder.h"
#include "model_test_util.h"

namespace tessera::model {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::model_dir;
using testing::read_text;
using testing::source_path;
using testing::TempDir;
using testing::write_file;

Tokenizer load(const std::string& dir) {
  Tokenizer tok;
  const Status st = Tokenizer::load(dir, &tok);
  EXPECT_TRUE(st.ok()) << st.to_string() << " (run scripts/install-deps.sh for the model)";
  return tok;
}

std::string decode(const Tokenizer& tok, const std::vector<int64_t>& ids, bool skip) {
  std::string out;
  size_t bad = 0;
  const Status st = tok.decode(ids, skip, &out, &bad);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return out;
}

void expect_golden(const Tokenizer& tok) {
  std::ifstream in(source_path("data/tokenizer/decode_golden.jsonl"));
  std::string line;
  size_t rows = 0;
  while (std::getline(in, line)) {
    const json row = json::parse(line);
    const auto ids = row["ids"].get<std::vector<int64_t>>();
    EXPECT_EQ(decode(tok, ids, true), row["text"].get<std::string>()) << row["id"];
    EXPECT_EQ(decode(tok, ids, false), row["text_with_specials"].get<std::string>()) << row["id"];
    ++rows;
  }
  EXPECT_GT(rows, 500u) << "no golden rows: run tools/make_decode_golden.py";
}

TEST(TokenizerDecode, MatchesHfOnTheGolden) { expect_golden(load(model_dir())); }

TEST(TokenizerDecode, TheVocabTxtFallbackDecodesTheSame) {
  TempDir dir;
  write_file(dir.file("vocab.txt"), read_text(model_dir() + "/vocab.txt"));
  expect_golden(load(dir.path().string()));
}

TEST(TokenizerDecode, AnUnknownIdIsRefusedWithItsPosition) {
  const Tokenizer tok = load(model_dir());
  std::string out;
  size_t bad = 0;
  Status st = tok.decode({101, 2023, 30522, 102}, true, &out, &bad);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(bad, 2u);
  EXPECT_NE(st.message().find("30522"), std::string::npos) << st.message();
  st = tok.decode({-1}, true, &out, &bad);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(bad, 0u);
}

TEST(WordPieceDecoder, CleanupRulesInHfOrder) {
  const std::pair<std::string, std::string> cases[] = {
      {" .", "."},     {" ?", "?"},     {" !", "!"},           {" ,", ","},
      {" ' ", "'"},    {" n't", "n't"}, {" 'm", "'m"},         {" 's", "'s"},
      {" 've", "'ve"}, {" 're", "'re"}, {" do not", " don't"}, {"a . b , c", "a. b, c"},
      {"x", "x"},      {"", ""}};
  for (const auto& [dirty, clean] : cases) {
    std::string s = dirty;
    wordpiece_cleanup(&s);
    EXPECT_EQ(s, clean) << "'" << dirty << "'";
  }
}

TEST(WordPieceDecoder, PiecesGlueAndAFirstPieceKeepsItsPrefix) {
  WordPieceDecoder d;
  d.set_token(0, "un", false);
  d.set_token(1, "##believ", false);
  d.set_token(2, "##able", false);
  d.set_token(3, ".", false);
  d.set_token(5, "[CLS]", true);
  std::string out;
  size_t bad = 0;
  ASSERT_TRUE(d.decode({5, 0, 1, 2, 3}, true, &out, &bad).ok());
  EXPECT_EQ(out, "unbelievable.");
  ASSERT_TRUE(d.decode({1, 0}, true, &out, &bad).ok());
  EXPECT_EQ(out, "##believ un");
  ASSERT_TRUE(d.decode({5, 1}, false, &out, &bad).ok());
  EXPECT_EQ(out, "[CLS]believ");
  EXPECT_FALSE(d.decode({0, 4}, true, &out, &bad).ok()) << "4 has no token";
  EXPECT_EQ(bad, 1u);
}

TEST(WordPieceDecoder, DecoderVariantsFromTokenizerJson) {
  json j = json::parse(read_text(model_dir() + "/tokenizer.json"));
  const std::vector<int64_t> ids = {101, 4895, 8671, 1012, 102};  // [CLS] un ##bel . [SEP]
  TempDir dir;
  j["decoder"]["cleanup"] = false;
  write_file(dir.file("tokenizer.json"), j.dump());
  std::string with_cleanup = decode(load(model_dir()), ids, true);
  EXPECT_EQ(decode(load(dir.path().string()), ids, true).size(), with_cleanup.size() + 1)
      << "without cleanup the space before '.' stays";

  j["decoder"] = nullptr;  // no decoder: HF joins the tokens with spaces
  write_file(dir.file("tokenizer.json"), j.dump());
  const std::string plain = decode(load(dir.path().string()), ids, true);
  EXPECT_NE(plain.find(" ##"), std::string::npos) << plain;

  j["decoder"] = {{"type", "CTC"}};
  write_file(dir.file("tokenizer.json"), j.dump());
  const Tokenizer tok = load(dir.path().string());
  std::string out;
  size_t bad = 0;
  const Status st = tok.decode(ids, true, &out, &bad);
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_NE(st.message().find("CTC"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace tessera::model
