// The tokenizer against HF `tokenizers`: ids, offsets and truncation on the
// committed corpus (data/tokenizer/golden.jsonl, made by
// tools/make_tokenizer_golden.py), the vocab.txt fallback on the same corpus,
// added-token flags, byte offsets, and errors for bad input and bad files.
//
// Offsets: tessera gives byte offsets into the UTF-8 text; the golden file
// holds what HF's Python API returns, offsets in code points. The test
// converts tessera's byte offsets to code points and compares exactly.
#include "model/tokenizer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

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

constexpr size_t kNoLimit = std::numeric_limits<size_t>::max();
constexpr size_t kTruncatedMaxLength = 16;  // as in the golden file's ids_max16

// Loads the default model's tokenizer; a missing model is a failure with the
// fix, never a skip.
::testing::AssertionResult load_default(Tokenizer* tok) {
  if (!fs::exists(model_dir() + "/tokenizer.json")) {
    return ::testing::AssertionFailure()
           << model_dir() << "/tokenizer.json is missing: run scripts/install-deps.sh "
           << "(it installs the default model and links it there)";
  }
  const Status st = Tokenizer::load(model_dir(), tok);
  if (!st.ok()) return ::testing::AssertionFailure() << st.to_string();
  return ::testing::AssertionSuccess();
}

struct GoldenRow {
  std::string id;
  std::string text;
  std::vector<int32_t> ids;
  std::vector<std::pair<int64_t, int64_t>> offsets;  // code points
  std::vector<int32_t> ids_max16;                    // empty when not in the file
};

std::vector<GoldenRow> read_golden(const std::string& name) {
  std::vector<GoldenRow> rows;
  std::ifstream in(source_path("data/tokenizer/" + name));
  std::string line;
  while (std::getline(in, line)) {
    const json j = json::parse(line);
    GoldenRow row{j["id"], j["text"], j["ids"], {}, {}};
    for (const auto& o : j["offsets"]) row.offsets.emplace_back(o[0], o[1]);
    if (j.contains("ids_max16")) row.ids_max16 = j["ids_max16"].get<std::vector<int32_t>>();
    rows.push_back(std::move(row));
  }
  return rows;
}

// chars[b] = number of code points that start before byte b.
std::vector<int64_t> code_point_index(std::string_view text) {
  std::vector<int64_t> chars(text.size() + 1);
  int64_t n = 0;
  for (size_t b = 0; b <= text.size(); ++b) {
    chars[b] = n;
    if (b < text.size() && (static_cast<unsigned char>(text[b]) & 0xC0) != 0x80) ++n;
  }
  return chars;
}

bool on_boundary(std::string_view text, int64_t offset) {
  if (offset < 0 || offset > static_cast<int64_t>(text.size())) return false;
  return offset == static_cast<int64_t>(text.size()) ||
         (static_cast<unsigned char>(text[offset]) & 0xC0) != 0x80;
}

std::string show(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
  return s;
}

std::vector<int32_t> ids_of(const std::vector<TokenSpan>& spans) {
  std::vector<int32_t> ids;
  for (const TokenSpan& t : spans) ids.push_back(t.id);
  return ids;
}

// Compares encode() (no truncation) with the golden ids and offsets, and
// tokenize() with the same minus [CLS] / [SEP]. Reports each differing row.
void expect_matches(const Tokenizer& tok, const std::vector<GoldenRow>& rows) {
  ASSERT_FALSE(rows.empty()) << "no golden rows: run tools/make_tokenizer_golden.py";
  int failures = 0;
  for (const GoldenRow& row : rows) {
    SCOPED_TRACE(row.id + ": " + json(row.text).dump());
    std::vector<TokenSpan> spans;
    ASSERT_TRUE(tok.encode(row.text, kNoLimit, &spans).ok());
    const std::vector<int32_t> ids = ids_of(spans);
    if (ids != row.ids) {
      ADD_FAILURE() << "ids differ\n  tessera: " << show(ids) << "\n  HF:      " << show(row.ids);
      if (++failures >= 10) return;
      continue;
    }
    const std::vector<int64_t> chars = code_point_index(row.text);
    for (size_t i = 0; i < spans.size(); ++i) {
      if (!on_boundary(row.text, spans[i].begin) || !on_boundary(row.text, spans[i].end)) {
        ADD_FAILURE() << "token " << i << ": byte offsets [" << spans[i].begin << ", "
                      << spans[i].end << ") are not character boundaries";
        ++failures;
        break;
      }
      const std::pair<int64_t, int64_t> got{chars[spans[i].begin], chars[spans[i].end]};
      if (got != row.offsets[i]) {
        ADD_FAILURE() << "token " << i << " (id " << ids[i] << "): offsets [" << got.first << ", "
                      << got.second << ") in code points, HF [" << row.offsets[i].first << ", "
                      << row.offsets[i].second << ")";
        ++failures;
        break;
      }
    }
    std::vector<TokenSpan> plain;
    ASSERT_TRUE(tok.tokenize(row.text, &plain).ok());
    ASSERT_EQ(plain.size() + 2, spans.size());
    for (size_t i = 0; i < plain.size(); ++i) {
      EXPECT_EQ(plain[i].id, spans[i + 1].id);
      EXPECT_EQ(plain[i].begin, spans[i + 1].begin);
      EXPECT_EQ(plain[i].end, spans[i + 1].end);
    }
    if (failures >= 10) return;
  }
}

TEST(TokenizerGolden, TokenizerJsonMatchesHfIdsAndOffsets) {
  Tokenizer tok;
  ASSERT_TRUE(load_default(&tok));
  const auto rows = read_golden("golden.jsonl");
  EXPECT_GE(rows.size(), 500u);
  expect_matches(tok, rows);
}

TEST(TokenizerGolden, TruncationMatchesHf) {
  Tokenizer tok;
  ASSERT_TRUE(load_default(&tok));
  int truncated = 0;
  for (const GoldenRow& row : read_golden("golden.jsonl")) {
    SCOPED_TRACE(row.id);
    std::vector<TokenSpan> spans;
    ASSERT_TRUE(tok.encode(row.text, kTruncatedMaxLength, &spans).ok());
    EXPECT_EQ(ids_of(spans), row.ids_max16);
    truncated += row.ids.size() > kTruncatedMaxLength;
  }
  EXPECT_GT(truncated, 100) << "the corpus should exercise truncation";
}

TEST(TokenizerGolden, VocabTxtFallbackMatchesHf) {
  Tokenizer from_json;
  ASSERT_TRUE(load_default(&from_json));
  TempDir dir;
  fs::copy_file(model_dir() + "/vocab.txt", dir.file("vocab.txt"));
  Tokenizer tok;
  const Status st = Tokenizer::load(dir.path().string(), &tok);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(tok.vocab_size(), from_json.vocab_size());
  EXPECT_EQ(tok.cls_id(), from_json.cls_id());
  EXPECT_EQ(tok.sep_id(), from_json.sep_id());
  EXPECT_EQ(tok.pad_id(), from_json.pad_id());
  EXPECT_EQ(tok.unk_id(), from_json.unk_id());
  expect_matches(tok, read_golden("golden.jsonl"));
}

// The variant of the model's tokenizer.json that the golden script builds:
// keep both in step (ADDED_TOKEN_FLAGS in tools/make_tokenizer_golden.py).
TEST(TokenizerGolden, AddedTokenFlagsMatchHf) {
  ASSERT_TRUE(fs::exists(model_dir() + "/tokenizer.json")) << "run scripts/install-deps.sh";
  json j = json::parse(read_text(model_dir() + "/tokenizer.json"));
  for (json& t : j["added_tokens"]) {
    if (t["content"] == "[MASK]") t["lstrip"] = t["rstrip"] = true;
    if (t["content"] == "[UNK]") t["single_word"] = true;
  }
  TempDir dir;
  write_file(dir.file("tokenizer.json"), j.dump());
  Tokenizer tok;
  const Status st = Tokenizer::load(dir.path().string(), &tok);
  ASSERT_TRUE(st.ok()) << st.to_string();
  expect_matches(tok, read_golden("added_tokens_golden.jsonl"));
}

TEST(Tokenizer, OffsetsAreBytesOfTheOriginalText) {
  Tokenizer tok;
  ASSERT_TRUE(load_default(&tok));
  // H é(2 bytes) l l o , ␠ 世(3) 界(3) ! ␠ [SEP] ␠ e U+0301(2). A character
  // dropped by the normalizer (the accent) belongs to no token.
  const std::string text = "H\u00e9llo, \u4e16\u754c! [SEP] e\u0301";
  std::vector<TokenSpan> spans;
  ASSERT_TRUE(tok.tokenize(text, &spans).ok());
  const std::vector<std::pair<int64_t, int64_t>> want = {{0, 6},   {6, 7},   {8, 11}, {11, 14},
                                                         {14, 15}, {16, 21}, {22, 23}};
  ASSERT_EQ(spans.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(spans[i].begin, want[i].first) << i;
    EXPECT_EQ(spans[i].end, want[i].second) << i;
  }
  EXPECT_EQ(spans[5].id, tok.sep_id());  // a special token written in the text
}

TEST(Tokenizer, EmptyAndWhitespaceOnlyTexts) {
  Tokenizer tok;
  ASSERT_TRUE(load_default(&tok));
  for (const std::string text : {"", " ", "\t\r\n", "\u3000\u00a0", "\u200b\x01"}) {
    std::vector<TokenSpan> spans{{1, 2, 3}};
    ASSERT_TRUE(tok.tokenize(text, &spans).ok());
    EXPECT_TRUE(spans.empty()) << json(text).dump();
    ASSERT_TRUE(tok.encode(text, 8, &spans).ok());
    EXPECT_EQ(ids_of(spans), (std::vector<int32_t>{tok.cls_id(), tok.sep_id()}));
  }
}

TEST(Tokenizer, EncodeNeedsRoomForTheSpecialTokens) {
  Tokenizer tok;
  ASSERT_TRUE(load_default(&tok));
  std::vector<TokenSpan> spans;
  const Status st = tok.encode("hello world", 1, &spans);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("max_length = 1"), std::string::npos) << st.message();
  ASSERT_TRUE(tok.encode("hello world", 2, &spans).ok());
  EXPECT_EQ(ids_of(spans), (std::vector<int32_t>{tok.cls_id(), tok.sep_id()}));
}

TEST(Tokenizer, InvalidUtf8IsAnErrorNamingTheByteOffset) {
  Tokenizer tok;
  ASSERT_TRUE(load_default(&tok));
  const std::pair<std::string, size_t> cases[] = {
      {"ab\xC3(", 2},            // bad continuation byte
      {"\xC0\x80", 0},           // overlong NUL
      {"ok \xED\xA0\x80", 3},    // UTF-16 surrogate
      {"x\xF4\x90\x80\x80", 1},  // above U+10FFFF
      {"abc\xE4\xB8", 3},        // truncated at the end
      {"\x80", 0},               // stray continuation byte
      {"caf\xC3\xA9 \xFF", 6},   // valid text before the bad byte
  };
  for (const auto& [text, offset] : cases) {
    std::vector<TokenSpan> spans;
    const Status st = tok.tokenize(text, &spans);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("byte offset " + std::to_string(offset) + " "), std::string::npos)
        << st.message();
    EXPECT_FALSE(tok.encode(text, 16, &spans).ok());
  }
}

TEST(Tokenizer, IsMovable) {
  Tokenizer tok;
  ASSERT_TRUE(load_default(&tok));
  std::vector<TokenSpan> before, after;
  ASSERT_TRUE(tok.encode("Moving a tokenizer keeps its vocabulary.", 32, &before).ok());
  Tokenizer moved = std::move(tok);
  ASSERT_TRUE(moved.encode("Moving a tokenizer keeps its vocabulary.", 32, &after).ok());
  EXPECT_EQ(ids_of(before), ids_of(after));
  EXPECT_GT(after.size(), 4u);
}

// --- Loading errors: each names the file and the problem. ---

Status load_json(const json& j, TempDir* dir, Tokenizer* tok) {
  write_file(dir->file("tokenizer.json"), j.dump());
  return Tokenizer::load(dir->path().string(), tok);
}

json default_tokenizer_json() { return json::parse(read_text(model_dir() + "/tokenizer.json")); }

void expect_error(const Status& st, StatusCode code, const std::vector<std::string>& parts) {
  EXPECT_EQ(st.code(), code) << st.to_string();
  for (const std::string& part : parts) {
    EXPECT_NE(st.message().find(part), std::string::npos)
        << "\"" << part << "\" not in: " << st.message();
  }
}

TEST(TokenizerLoad, MissingDirectoryOrFiles) {
  Tokenizer tok;
  expect_error(Tokenizer::load("/nonexistent/tessera-model", &tok), StatusCode::kNotFound,
               {"/nonexistent/tessera-model", "tokenizer.json", "vocab.txt"});
  TempDir empty;
  expect_error(Tokenizer::load(empty.path().string(), &tok), StatusCode::kNotFound,
               {empty.path().string()});
}

TEST(TokenizerLoad, CorruptTokenizerJson) {
  ASSERT_TRUE(fs::exists(model_dir() + "/tokenizer.json")) << "run scripts/install-deps.sh";
  const std::string full = read_text(model_dir() + "/tokenizer.json");
  TempDir dir;
  write_file(dir.file("tokenizer.json"), full.substr(0, full.size() / 2));  // truncated
  Tokenizer tok;
  expect_error(Tokenizer::load(dir.path().string(), &tok), StatusCode::kInvalidArgument,
               {dir.file("tokenizer.json"), "not valid JSON"});
  write_file(dir.file("tokenizer.json"), "[1, 2, 3]");
  expect_error(Tokenizer::load(dir.path().string(), &tok), StatusCode::kInvalidArgument,
               {dir.file("tokenizer.json"), "JSON object"});
}

TEST(TokenizerLoad, FieldErrorsNameTheField) {
  ASSERT_TRUE(fs::exists(model_dir() + "/tokenizer.json")) << "run scripts/install-deps.sh";
  const json base = default_tokenizer_json();
  TempDir dir;
  Tokenizer tok;

  json j = base;
  j["model"]["type"] = "WordLevel";
  expect_error(load_json(j, &dir, &tok), StatusCode::kUnsupported,
               {"tokenizer.json", "model.type", "\"WordLevel\"", "WordPiece"});

  j = base;
  j["model"].erase("vocab");
  expect_error(load_json(j, &dir, &tok), StatusCode::kInvalidArgument, {"model.vocab"});

  j = base;
  j["model"]["vocab"]["hello"] = -3;
  expect_error(load_json(j, &dir, &tok), StatusCode::kInvalidArgument,
               {"model.vocab[\"hello\"]", "-3"});

  j = base;
  j["model"]["unk_token"] = "<unk>";
  expect_error(load_json(j, &dir, &tok), StatusCode::kInvalidArgument,
               {"tokenizer.json", "\"<unk>\"", "not in the vocabulary"});

  j = base;
  j["normalizer"] = {{"type", "NFKC"}};
  expect_error(load_json(j, &dir, &tok), StatusCode::kUnsupported,
               {"normalizer", "NFKC", "BertNormalizer"});

  j = base;
  j["normalizer"]["lowercase"] = "yes";
  expect_error(load_json(j, &dir, &tok), StatusCode::kInvalidArgument,
               {"normalizer.lowercase", "\"yes\""});

  j = base;
  j["pre_tokenizer"] = {{"type", "Whitespace"}};
  expect_error(load_json(j, &dir, &tok), StatusCode::kUnsupported,
               {"pre_tokenizer", "Whitespace", "BertPreTokenizer"});

  j = base;
  j["post_processor"] = {{"type", "BertPostProcessor"}};
  expect_error(load_json(j, &dir, &tok), StatusCode::kUnsupported,
               {"post_processor", "\"BertPostProcessor\"", "TemplateProcessing"});

  j = base;
  j["added_tokens"][0]["normalized"] = "no";
  expect_error(load_json(j, &dir, &tok), StatusCode::kInvalidArgument,
               {"added_tokens[0].normalized", "\"no\""});
}

TEST(TokenizerLoad, VocabTxtErrors) {
  TempDir dir;
  Tokenizer tok;
  write_file(dir.file("vocab.txt"), "[PAD]\n[CLS]\n[SEP]\nhello\n");
  expect_error(Tokenizer::load(dir.path().string(), &tok), StatusCode::kInvalidArgument,
               {dir.file("vocab.txt"), "\"[UNK]\"", "not in the vocabulary"});
  write_file(dir.file("vocab.txt"), "[UNK]\n[CLS]\nhello\n");
  expect_error(Tokenizer::load(dir.path().string(), &tok), StatusCode::kInvalidArgument,
               {dir.file("vocab.txt"), "\"[SEP]\""});
  write_file(dir.file("vocab.txt"), "[UNK]\n[CLS]\n[SEP]\nbad\xC3(\n");
  expect_error(Tokenizer::load(dir.path().string(), &tok), StatusCode::kInvalidArgument,
               {dir.file("vocab.txt"), "byte offset 21", "line 4"});
  write_file(dir.file("vocab.txt"), "");
  expect_error(Tokenizer::load(dir.path().string(), &tok), StatusCode::kInvalidArgument,
               {dir.file("vocab.txt"), "empty"});
}

TEST(TokenizerLoad, SmallVocabTxtWorks) {
  TempDir dir;
  // Trailing spaces and \r are trimmed as in HF; ids are line numbers.
  write_file(dir.file("vocab.txt"), "[PAD]\n[UNK]\r\n[CLS]\n[SEP] \nhello\nwor\n##ld\n,\n");
  Tokenizer tok;
  const Status st = Tokenizer::load(dir.path().string(), &tok);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(tok.vocab_size(), 8u);
  EXPECT_EQ(tok.unk_id(), 1);
  std::vector<TokenSpan> spans;
  ASSERT_TRUE(tok.encode("Hello, WORLD [SEP] planet", 16, &spans).ok());
  EXPECT_EQ(ids_of(spans), (std::vector<int32_t>{2, 4, 7, 5, 6, 3, 1, 3}));
}

}  // namespace
}  // namespace tessera::model
