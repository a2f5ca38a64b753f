// The tokenizer seam: what describe() reports, continues_word for each model,
// encode_pair's contract, and errors that name the file, the field and what
// is supported (tokenizer.json of each model type, made hostile one field at
// a time).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/tokenizer.h"
#include "model/tokenizers/hf_regex.h"
#include "model/tokenizers/pre_tokenizers.h"
#include "model_test_util.h"

namespace tessera::model {
namespace {

using nlohmann::json;
using testing::expect_status;
using testing::model_dir;
using testing::read_text;
using testing::source_path;
using testing::TempDir;
using testing::write_file;

json committed(const std::string& name) {
  return json::parse(read_text(source_path("data/tokenizer/" + name + "/tokenizer.json")));
}

Status load_json(const json& j, TempDir* dir, Tokenizer* tok) {
  write_file(dir->file("tokenizer.json"), j.dump());
  return Tokenizer::load(dir->path().string(), tok);
}

TEST(TokenizerDescribe, NamesEveryStep) {
  Tokenizer tok;
  ASSERT_TRUE(Tokenizer::load(model_dir(), &tok).ok());
  const std::string d = tok.describe();
  for (const char* part :
       {"model: WordPiece", "normalizer: BertNormalizer", "pre_tokenizer: BertPreTokenizer",
        "post_processor: TemplateProcessing", "decoder: WordPiece", "vocab size: 30522",
        "\"[CLS]\" = 101", "\"[SEP]\" = 102", "unk \"[UNK]\" = 100"}) {
    EXPECT_NE(d.find(part), std::string::npos) << part << " not in:\n" << d;
  }
  TempDir dir;
  ASSERT_TRUE(load_json(committed("spm_nfkc"), &dir, &tok).ok());
  const std::string s = tok.describe();
  for (const char* part :
       {"model: Unigram", "normalizer: Precompiled", "Strip(right)", "Replace(\" {2,}\")",
        "pre_tokenizer: Metaspace", "prepend_scheme always", "decoder: Metaspace", "\"<s>\" = 0",
        "\"</s>\" = 2"}) {
    EXPECT_NE(s.find(part), std::string::npos) << part << " not in:\n" << s;
  }
  ASSERT_TRUE(load_json(committed("bpe_qwen3_embedding"), &dir, &tok).ok());
  const std::string q = tok.describe();
  for (const char* part :
       {"normalizer: NFC", "pre_tokenizer: Split (Regex \"(?i:'s|", "Isolated) + ByteLevel",
        "use_regex false", "post_processor: ByteLevel + TemplateProcessing", "<|endoftext|>"}) {
    EXPECT_NE(q.find(part), std::string::npos) << part << " not in:\n" << q;
  }
  EXPECT_EQ(tok.cls_id(), tok.sep_id());
  ASSERT_TRUE(load_json(committed("bpe_qwen2"), &dir, &tok).ok());
  const std::string n = tok.describe();
  EXPECT_NE(n.find("post_processor: ByteLevel + no special tokens"), std::string::npos) << n;
  EXPECT_EQ(tok.cls_id(), -1);
  EXPECT_EQ(tok.sep_id(), -1);
  ASSERT_TRUE(load_json(committed("bpe_split_steps"), &dir, &tok).ok());
  const std::string t = tok.describe();
  for (const char* part :
       {"Split (String \"-\", Contiguous)", "Split (String \"x\", Removed)",
        "Split (Regex \"[^0-9]\", Removed, invert)", "MergedWithNext", "MergedWithPrevious"}) {
    EXPECT_NE(t.find(part), std::string::npos) << part << " not in:\n" << t;
  }
  ASSERT_TRUE(load_json(committed("bpe"), &dir, &tok).ok());
  const std::string b = tok.describe();
  for (const char* part :
       {"model: BPE", "merges", "pre_tokenizer: ByteLevel",
        "post_processor: RobertaProcessing (trim_offsets)", "decoder: ByteLevel", "no unk"}) {
    EXPECT_NE(b.find(part), std::string::npos) << part << " not in:\n" << b;
  }
}

// A word's first token never continues a word; its later ones always do.
void expect_word_starts(const Tokenizer& tok, std::string_view text,
                        const std::vector<size_t>& word_starts) {
  std::vector<TokenSpan> spans;
  ASSERT_TRUE(tok.tokenize(text, &spans).ok());
  ASSERT_FALSE(spans.empty());
  size_t starts = 0;
  for (size_t i = 0; i < spans.size(); ++i) {
    bool is_start = false;
    for (size_t s : word_starts) is_start |= spans[i].begin == static_cast<int64_t>(s);
    // The first token at a word start begins the word.
    const bool first_at = is_start && (i == 0 || spans[i - 1].begin != spans[i].begin);
    EXPECT_EQ(spans[i].continues_word, !first_at)
        << "token " << i << " [" << spans[i].begin << ", " << spans[i].end << ")";
    starts += first_at;
  }
  EXPECT_EQ(starts, word_starts.size());
}

TEST(TokenizerContinuesWord, BpeAndUnigramMarkLaterPiecesOfAWord) {
  TempDir dir;
  Tokenizer tok;
  const std::string text = "extraordinarily unbelievable tokenization";
  ASSERT_TRUE(load_json(committed("bpe"), &dir, &tok).ok());
  // Byte-level words begin at their leading space, trimmed off by trim_offsets.
  expect_word_starts(tok, text, {0, 16, 29});
  // Metaspace words begin at their '▁', which is the space before them.
  ASSERT_TRUE(load_json(committed("unigram"), &dir, &tok).ok());
  expect_word_starts(tok, text, {0, 15, 28});
}

TEST(TokenizerEncodePair, BertTemplateTypeIdsAndByteOffsetsIntoEachText) {
  Tokenizer tok;
  ASSERT_TRUE(Tokenizer::load(model_dir(), &tok).ok());
  std::vector<TokenSpan> spans;
  std::vector<int32_t> types;
  ASSERT_TRUE(tok.encode_pair("caf\xC3\xA9 time", "b\xC3\xA9 here", 64, &spans, &types).ok());
  ASSERT_EQ(spans.size(), types.size());
  ASSERT_EQ(spans.size(), 7u);  // [CLS] cafe time [SEP] be here [SEP]
  EXPECT_EQ(spans[0].id, tok.cls_id());
  EXPECT_EQ(spans[3].id, tok.sep_id());
  EXPECT_EQ(spans[6].id, tok.sep_id());
  EXPECT_EQ(types, (std::vector<int32_t>{0, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(spans[4].begin, 0);  // "bé" in b
  EXPECT_EQ(spans[4].end, 3);
  EXPECT_EQ(spans[5].begin, 4);  // "here" in b
  const Status st = tok.encode_pair("a", "b", 2, &spans, &types);
  expect_status(st, StatusCode::kInvalidArgument, {"max_length = 2", "3 special tokens"});
}

TEST(TokenizerErrors, UnsupportedStepsNameThemselvesAndTheSupportedList) {
  TempDir dir;
  Tokenizer tok;
  json j = committed("unigram");
  j["model"]["type"] = "WordLevel";
  expect_status(
      load_json(j, &dir, &tok), StatusCode::kUnsupported,
      {"tokenizer.json", "model.type", "\"WordLevel\"", "\"BPE\"", "\"Unigram\"", "\"WordPiece\""});
  j = committed("unigram");
  j["normalizer"]["normalizers"][1] = {{"type", "NFKC_CF"}};
  expect_status(load_json(j, &dir, &tok), StatusCode::kUnsupported,
                {"normalizer.normalizers[1]", "\"NFKC_CF\"", "\"Precompiled\"", "\"NFKC\""});
  j = committed("bpe");
  j["pre_tokenizer"] = {{"type", "Digits"}};
  expect_status(load_json(j, &dir, &tok), StatusCode::kUnsupported,
                {"pre_tokenizer", "\"Digits\"", "\"ByteLevel\"", "\"Metaspace\""});
  j = committed("bpe");
  j["post_processor"] = {{"type", "Nope"}};
  expect_status(load_json(j, &dir, &tok), StatusCode::kUnsupported,
                {"post_processor", "\"Nope\"", "\"RobertaProcessing\"", "\"TemplateProcessing\""});
  j = committed("unigram");
  j["pre_tokenizer"]["prepend_scheme"] = "sometimes";
  expect_status(load_json(j, &dir, &tok), StatusCode::kUnsupported,
                {"pre_tokenizer.prepend_scheme", "sometimes", "\"first\""});
  // A decoder tessera cannot decode with loads; decode() names it.
  j = committed("bpe");
  j["decoder"] = {{"type", "CTC"}};
  ASSERT_TRUE(load_json(j, &dir, &tok).ok());
  std::string out;
  size_t bad = 0;
  expect_status(tok.decode({1, 2}, false, &out, &bad), StatusCode::kUnsupported,
                {"decoder", "\"CTC\"", "\"ByteLevel\""});
}

TEST(TokenizerErrors, SplitFieldsNameTheFieldAndTheValue) {
  TempDir dir;
  Tokenizer tok;
  json j = committed("bpe_qwen2");
  json& split = j["pre_tokenizer"]["pretokenizers"][0];
  split["pattern"]["Regex"] = "(unclosed|\\p{L}";
  expect_status(load_json(j, &dir, &tok), StatusCode::kInvalidArgument,
                {"tokenizer.json", "pre_tokenizer.pretokenizers[0].pattern.Regex",
                 "\"(unclosed|\\p{L}\"", "U_REGEX"});
  split["pattern"] = {{"Regex", "a\\Kb"}};  // ICU would read \K as K
  expect_status(load_json(j, &dir, &tok), StatusCode::kUnsupported,
                {"pre_tokenizer.pretokenizers[0].pattern.Regex", "\"a\\Kb\"", "\\K"});
  split["pattern"] = {{"Regex", "(?~abc)"}};  // ICU refuses it
  expect_status(load_json(j, &dir, &tok), StatusCode::kInvalidArgument,
                {"pre_tokenizer.pretokenizers[0].pattern.Regex", "(?~abc)"});
  split["pattern"] = {{"Glob", "*"}};
  expect_status(load_json(j, &dir, &tok), StatusCode::kInvalidArgument,
                {"pre_tokenizer.pretokenizers[0].pattern", "\"String\"", "\"Regex\""});
  split["pattern"] = {{"String", " "}};
  split["behavior"] = "Merged";
  expect_status(load_json(j, &dir, &tok), StatusCode::kUnsupported,
                {"pre_tokenizer.pretokenizers[0].behavior", "\"Merged\"", "\"MergedWithNext\"",
                 "\"Contiguous\""});
  split.erase("behavior");
  expect_status(load_json(j, &dir, &tok), StatusCode::kUnsupported,
                {"pre_tokenizer.pretokenizers[0].behavior", "null", "\"Isolated\""});
  split["behavior"] = "Removed";
  split["invert"] = "no";
  expect_status(load_json(j, &dir, &tok), StatusCode::kInvalidArgument,
                {"pre_tokenizer.pretokenizers[0].invert", "\"no\""});
  split["invert"] = true;
  ASSERT_TRUE(load_json(j, &dir, &tok).ok());
}

// Oniguruma's escapes that ICU reads otherwise become sets with their meaning,
// outside and inside brackets, or are refused; escaped backslashes and
// \Q...\E stay.
TEST(TokenizerRegex, OnigurumaEscapesAreRewrittenForIcu) {
  const auto icu = [](std::string_view onig) {
    std::string out, refused;
    return tokenizers::oniguruma_to_icu(onig, &out, &refused) ? out : "refused " + refused;
  };
  EXPECT_EQ(icu("\\s+(?!\\S)|[^\\s\\p{L}]"), "\\s+(?!\\S)|[^\\s\\p{L}]");
  EXPECT_EQ(icu("[^\\h]\\H\\v"), "[^[0-9A-Fa-f]][^0-9A-Fa-f]\\x{0B}");
  EXPECT_EQ(icu("\\\\h \\Q\\h\\K\\E\\h \\d\\r\\n \\"),
            "\\\\h \\Q\\h\\K\\E[0-9A-Fa-f] \\d\\r\\n \\");
  EXPECT_EQ(icu("(a)\\g<1>"), "refused \\g");
  // An empty match where the previous one ended is skipped, as HF's find_iter.
  std::unique_ptr<const icu::RegexPattern> re;
  ASSERT_TRUE(tokenizers::compile_hf_regex(tokenizers::JsonFields("t"), "f", "b*", &re).ok());
  std::vector<std::pair<size_t, size_t>> m;
  ASSERT_TRUE(tokenizers::find_matches(std::move(re), "abbc", "f", &m).ok());
  EXPECT_EQ(m, (std::vector<std::pair<size_t, size_t>>{{0, 0}, {1, 3}, {4, 4}}));
  ASSERT_TRUE(tokenizers::compile_hf_regex(tokenizers::JsonFields("t"), "f", "[^\\h]+", &re).ok());
  m.clear();
  ASSERT_TRUE(tokenizers::find_matches(std::move(re), "abgz1 ", "f", &m).ok());
  EXPECT_EQ(m, (std::vector<std::pair<size_t, size_t>>{{2, 4}, {5, 6}}));
}

// Hostile input III, class 5: a pattern that backtracks without end,
// `(a+)+$` against a run of a's that does not end the text, never returned on
// ICU without a limit (HF's Oniguruma stops it by its retry limit).
TEST(TokenizerRegex, APatternThatBacktracksWithoutEndIsStoppedNamingIt) {
  std::unique_ptr<const icu::RegexPattern> re;
  ASSERT_TRUE(tokenizers::compile_hf_regex(tokenizers::JsonFields("t"), "f", "(a+)+$", &re).ok());
  std::vector<std::pair<size_t, size_t>> m;
  expect_status(
      tokenizers::find_matches(std::move(re), std::string(40, 'a') + "!", "the pattern", &m),
      StatusCode::kInvalidArgument, {"the pattern", "backtracks", "time limit"});
  // A long linear match is not: every space of a 4 MB run under GPT-2's
  // pattern is one match (the limits grow with the text; ICU's default stack
  // overflowed on 1 MB and the run was silently left unmatched).
  ASSERT_TRUE(
      tokenizers::compile_hf_regex(tokenizers::JsonFields("t"), "f", "\\s+(?!\\S)|\\s+", &re).ok());
  m.clear();
  const std::string spaces(4 << 20, ' ');
  ASSERT_TRUE(tokenizers::find_matches(std::move(re), spaces, "gpt2", &m).ok());
  EXPECT_EQ(m, (std::vector<std::pair<size_t, size_t>>{{0, spaces.size()}}));
  // Through a tokenizer.json Split step: tokenizing fails naming the step.
  json j = committed("bpe");
  j["pre_tokenizer"] = {{"type", "Split"},
                        {"pattern", {{"Regex", "(a+)+$"}}},
                        {"behavior", "Isolated"},
                        {"invert", false}};
  TempDir dir;
  Tokenizer tok;
  ASSERT_TRUE(load_json(j, &dir, &tok).ok());
  std::vector<TokenSpan> out;
  expect_status(tok.tokenize(std::string(40, 'a') + "!", &out), StatusCode::kInvalidArgument,
                {"pre_tokenizer Split pattern \"(a+)+$\"", "backtracks"});
  // The same step on an ordinary text is untouched by the limits.
  EXPECT_TRUE(tok.tokenize("a normal sentence", &out).ok());
}

// Hostile input III, class 8: Replace steps that each multiply the text
// (8 x 10x) grew it until bad_alloc. The normalizer stops past 32x.
TEST(TokenizerErrors, ANormalizerThatExpandsWithoutBoundIsStopped) {
  json j = committed("bpe");
  json steps = json::array();
  for (int i = 0; i < 8; ++i) {
    steps.push_back(
        {{"type", "Replace"}, {"pattern", {{"String", "a"}}}, {"content", "aaaaaaaaaa"}});
  }
  j["normalizer"] = {{"type", "Sequence"}, {"normalizers", steps}};
  TempDir dir;
  Tokenizer tok;
  ASSERT_TRUE(load_json(j, &dir, &tok).ok());
  std::vector<TokenSpan> out;
  expect_status(tok.tokenize(std::string(200, 'a'), &out), StatusCode::kInvalidArgument,
                {"normalizer Replace(\"a\")", "more than 32x its input"});
  // One step of 10x is what a normalizer may do.
  j["normalizer"] = steps[0];
  TempDir one_dir;
  ASSERT_TRUE(load_json(j, &one_dir, &tok).ok());
  EXPECT_TRUE(tok.tokenize(std::string(200, 'a'), &out).ok());
}

// Hostile input III, class 7: one Unigram piece of 100k characters took
// 16.5 s to load and then bad_alloc (every prefix was stored with its bytes,
// L^2 / 2 of them). Pieces are bounded, and the prefixes are hashes.
TEST(TokenizerErrors, AHugeUnigramPieceIsRefusedAtOnce) {
  json j = committed("unigram");
  j["model"]["vocab"].push_back({std::string(100000, 'a'), -5.0});
  TempDir dir;
  Tokenizer tok;
  expect_status(load_json(j, &dir, &tok), StatusCode::kInvalidArgument,
                {"model.vocab[", "100000 bytes", "at most 1024 bytes"});
  // A long piece within the bound loads and is found whole.
  json ok = committed("unigram");
  const std::string piece = "\u2581" + std::string(1000, 'q');  // "▁qqq..." as Metaspace makes it
  ok["model"]["vocab"].push_back({piece, 0.0});
  TempDir ok_dir;
  ASSERT_TRUE(load_json(ok, &ok_dir, &tok).ok());
  std::vector<TokenSpan> out;
  ASSERT_TRUE(tok.tokenize(std::string(1000, 'q'), &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].id, static_cast<int32_t>(ok["model"]["vocab"].size() - 1));
}

TEST(TokenizerErrors, MalformedEntriesNameTheEntry) {
  TempDir dir;
  Tokenizer tok;
  json j = committed("bpe");
  j["model"]["merges"][3] = {"zzz_not_a_token", "x"};
  expect_status(load_json(j, &dir, &tok), StatusCode::kInvalidArgument,
                {"tokenizer.json", "model.merges[3]", "zzz_not_a_token", "not in the vocabulary"});
  j = committed("bpe");
  j["model"]["merges"][5] = "nospace";
  expect_status(load_json(j, &dir, &tok), StatusCode::kInvalidArgument,
                {"model.merges[5]", "nospace"});
  j = committed("bpe");
  j["model"]["vocab"]["hello"] = "one";
  expect_status(load_json(j, &dir, &tok), StatusCode::kInvalidArgument,
                {"model.vocab[\"hello\"]", "\"one\""});
  j = committed("unigram");
  j["model"]["vocab"][7] = {"a"};
  expect_status(load_json(j, &dir, &tok), StatusCode::kInvalidArgument, {"model.vocab[7]"});
  j = committed("unigram");
  j["model"]["unk_id"] = 1000000;
  expect_status(load_json(j, &dir, &tok), StatusCode::kInvalidArgument,
                {"model.unk_id", "1000000"});
  j = committed("spm_nfkc");
  j["normalizer"]["normalizers"][0]["precompiled_charsmap"] = "not base64!";
  expect_status(load_json(j, &dir, &tok), StatusCode::kInvalidArgument,
                {"normalizer.normalizers[0].precompiled_charsmap", "base64"});
  j = committed("spm_nfkc");
  j["normalizer"]["normalizers"][0]["precompiled_charsmap"] = "AAAA";  // trie size 0
  expect_status(load_json(j, &dir, &tok), StatusCode::kInvalidArgument, {"precompiled_charsmap"});
  j = committed("unigram");
  j["post_processor"]["single"][0]["SpecialToken"]["id"] = "<missing>";
  expect_status(load_json(j, &dir, &tok), StatusCode::kInvalidArgument,
                {"post_processor.special_tokens[\"<missing>\"]"});
}

// A charsmap whose trie points anywhere must never be read out of bounds
// (ASan builds check this): random units, every lookup bounded.
// Hostile input III, class 6: an id near 2^31 sized the id decoder's table
// (2^31 strings) before any check. Ids are now checked first, against the
// model's vocab_size where the caller gives it.
TEST(TokenizerErrors, AnIdBeyondAnyVocabularyIsRefusedBeforeAllocating) {
  {
    // (Added tokens' ids in the file are not used: HF numbers them after the
    // vocabulary, and so does tessera, so only the model's ids can be hostile.)
    json j = committed("bpe");
    j["model"]["vocab"]["hostile"] = 2147483000;
    TempDir dir;
    Tokenizer tok;
    expect_status(load_json(j, &dir, &tok), StatusCode::kInvalidArgument,
                  {"tokenizer.json", "\"hostile\" has id 2147483000", "outside [0, 16777216)",
                   "no vocabulary is that large"});
  }
  // Against a model's own size: the first id past it is named.
  json j = committed("bpe");
  TempDir dir;
  write_file(dir.file("tokenizer.json"), j.dump());
  Tokenizer tok;
  expect_status(Tokenizer::load(dir.path().string(), &tok, 100), StatusCode::kInvalidArgument,
                {"has id", "outside [0, 100)", "config.json vocab_size = 100"});
}

TEST(TokenizerErrors, HostileCharsmapIsReadInBounds) {
  TempDir dir;
  Tokenizer tok;
  std::string blob(4 + 64 * 4 + 16, '\0');
  blob[1] = 1;  // trie size 256 bytes (little-endian): 64 random units
  uint32_t x = 12345;
  for (size_t i = 4; i < blob.size(); ++i) {
    x = x * 1103515245u + 12345u;
    blob[i] = static_cast<char>(x >> 16);
  }
  // The normalized strings: valid UTF-8 ("abc\0" repeated), so it loads.
  for (size_t i = 4 + 256; i < blob.size(); ++i) blob[i] = i % 4 == 3 ? '\0' : 'a';
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string b64;
  for (size_t i = 0; i < blob.size(); i += 3) {
    uint32_t v = static_cast<unsigned char>(blob[i]) << 16;
    if (i + 1 < blob.size()) v |= static_cast<unsigned char>(blob[i + 1]) << 8;
    if (i + 2 < blob.size()) v |= static_cast<unsigned char>(blob[i + 2]);
    for (int k = 0; k < 4; ++k) b64.push_back(kAlphabet[(v >> (18 - 6 * k)) & 63]);
  }
  json j = committed("spm_nfkc");
  j["normalizer"]["normalizers"][0]["precompiled_charsmap"] = b64;
  const Status st = load_json(j, &dir, &tok);
  ASSERT_TRUE(st.ok()) << st.to_string();
  std::vector<TokenSpan> spans;
  for (const char* text : {"hello", "\xC3\xA9\xE2\x80\x8B x", "\xF0\x9F\x98\x80", "\x01\x7F"}) {
    EXPECT_TRUE(tok.tokenize(text, &spans).ok());
  }
}

TEST(TokenizerByteLevel, SplitFollowsGpt2Pattern) {
  const auto pieces = [](std::string_view s) {
    std::vector<std::pair<size_t, size_t>> r;
    tokenizers::byte_level_split(s, &r);
    std::vector<std::string> out;
    for (auto [b, e] : r) out.emplace_back(s.substr(b, e - b));
    return out;
  };
  EXPECT_EQ(
      pieces("I'm here  now\n\nok 123!?"),
      (std::vector<std::string>{"I", "'m", " here", " ", " now", "\n", "\n", "ok", " 123", "!?"}));
  EXPECT_EQ(pieces("end   "), (std::vector<std::string>{"end", "   "}));
  EXPECT_EQ(pieces(" 'x"), (std::vector<std::string>{" '", "x"}));
}

}  // namespace
}  // namespace tessera::model
