// Every tokenizer model folder against HF `tokenizers`, id for id and offset
// for offset, on tokenizers trained or converted by
// tools/make_tokenizer_models.py / make_tokenizer_spm.py
// (data/tokenizer/<name>/): byte-level BPE as RoBERTa (with and without
// add_prefix_space), as Qwen2 (Split with its regex; no specials, or
// Qwen3-Embedding's "$A <|endoftext|>"), as ModernBERT, and behind Split with
// every behavior; Unigram with Metaspace as XLM-R, two sentencepiece
// models converted with their Precompiled normalizer, and all-mpnet-base-v2's
// WordPiece + RobertaProcessing (and its added tokens). Checked per tokenizer: encode with and
// without specials, truncation to 16, pairs with longest_first truncation
// (type ids too), decode with and without specials, every data/long
// document, every code point (digests of runs), and the normalizer alone on
// every code point.
//
// Offsets: the goldens hold HF Python's offsets, in code points; tessera's
// byte offsets are converted before comparing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/tokenizer.h"
#include "model/tokenizer_utf8.h"
#include "model/tokenizers/normalizers.h"
#include "model_test_util.h"

namespace tessera::model {
namespace {

using nlohmann::json;
using testing::model_dir;
using testing::read_text;
using testing::source_path;
using testing::TempDir;
using testing::write_file;

constexpr size_t kNoLimit = std::numeric_limits<size_t>::max();
constexpr size_t kTruncatedMaxLength = 16;
constexpr int kMaxReported = 8;  // failing rows reported per test

std::string folder(const std::string& name) { return source_path("data/tokenizer/" + name); }

// The tokenizer.json of `name`: committed, or (wordpiece_*) the default
// model's, as is or changed as tools/make_tokenizer_models.py changes it.
json tokenizer_json(const std::string& name) {
  if (!name.starts_with("wordpiece_")) {
    return json::parse(read_text(folder(name) + "/tokenizer.json"));
  }
  json j = json::parse(read_text(model_dir() + "/tokenizer.json"));
  if (name == "wordpiece_bert") return j;
  j["post_processor"] = {{"type", "RobertaProcessing"},
                         {"sep", {"</s>", 2}},
                         {"cls", {"<s>", 0}},
                         {"trim_offsets", true},
                         {"add_prefix_space", false}};
  // all-mpnet-base-v2's added tokens ("<unk>" is matched in the normalized
  // text). Their ids are MPNet's, not in this vocabulary: HF gives such a
  // token the next free id, so decoding id 0 says "[PAD]".
  j["added_tokens"] = json::array();
  for (const auto& [id, content] : std::vector<std::pair<int, std::string>>{{0, "<s>"},
                                                                            {1, "<pad>"},
                                                                            {2, "</s>"},
                                                                            {3, "<unk>"},
                                                                            {104, "[UNK]"},
                                                                            {30526, "<mask>"}}) {
    j["added_tokens"].push_back({{"id", id},
                                 {"content", content},
                                 {"single_word", false},
                                 {"lstrip", content == "<mask>"},
                                 {"rstrip", false},
                                 {"normalized", content == "<unk>"},
                                 {"special", true}});
  }
  return j;
}

std::vector<json> read_jsonl(const std::string& path);

// The texts the goldens name by id (data/tokenizer/model_texts.jsonl).
const std::map<std::string, std::string>& texts() {
  static const std::map<std::string, std::string> by_id = [] {
    std::map<std::string, std::string> m;
    for (const json& row : read_jsonl(folder("model_texts.jsonl"))) m[row["id"]] = row["text"];
    return m;
  }();
  return by_id;
}

std::vector<json> read_jsonl(const std::string& path) {
  std::vector<json> rows;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) rows.push_back(json::parse(line));
  }
  return rows;
}

// cp[b]: byte offset b in code points as HF's Python API converts it: the
// code points that start before b, or for a b inside a character (trim_offsets
// can cut a byte-level token there) the index of that character.
std::vector<int64_t> code_point_index(std::string_view text) {
  std::vector<int64_t> cp(text.size() + 1);
  int64_t n = 0;
  for (size_t b = 0; b <= text.size(); ++b) {
    const bool starts = b == text.size() || (static_cast<unsigned char>(text[b]) & 0xC0) != 0x80;
    cp[b] = starts ? n : n - 1;
    if (b < text.size() && starts) ++n;
  }
  return cp;
}

std::vector<int32_t> ids_of(const std::vector<TokenSpan>& spans) {
  std::vector<int32_t> ids;
  for (const TokenSpan& t : spans) ids.push_back(t.id);
  return ids;
}

// Offsets in code points, flattened as the goldens hold them; each token's
// from `sources[which[i]]` (pairs: a, b; specials, -1, count as a).
json offsets_of(const std::vector<TokenSpan>& spans, const std::vector<std::string_view>& sources,
                const std::vector<int>& which) {
  std::vector<std::vector<int64_t>> cps;
  for (std::string_view t : sources) cps.push_back(code_point_index(t));
  json out = json::array();
  for (size_t i = 0; i < spans.size(); ++i) {
    const int w = which.empty() ? 0 : std::max(which[i], 0);
    const auto& cp = cps[static_cast<size_t>(w)];
    const auto at = [&](int64_t b) {
      return b >= 0 && b < static_cast<int64_t>(cp.size()) ? cp[static_cast<size_t>(b)] : -1;
    };
    out.push_back(at(spans[i].begin));
    out.push_back(at(spans[i].end));
  }
  return out;
}

// FNV-1a 64 over "id,begin,end;" per token, offsets in code points (as the
// script's digest()).
std::string digest(const std::vector<TokenSpan>& spans, std::string_view text) {
  const std::vector<int64_t> cp = code_point_index(text);
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const TokenSpan& t : spans) {
    const std::string s = std::to_string(t.id) + "," + std::to_string(cp[t.begin]) + "," +
                          std::to_string(cp[t.end]) + ";";
    for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

class TokenizerModels : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const json j = tokenizer_json(GetParam());
    write_file(dir_.file("tokenizer.json"), j.dump());
    const Status st = Tokenizer::load(dir_.path().string(), &tok_);
    ASSERT_TRUE(st.ok()) << st.to_string();
    // The specials the single template puts before the text: where the
    // token of "a" (bytes 0..1; specials have 0..0) lands.
    std::vector<TokenSpan> probe;
    ASSERT_TRUE(tok_.encode("a", kNoLimit, &probe).ok());
    while (lead_ < probe.size() && probe[lead_].end == 0) ++lead_;
    specials_ = probe.size() - 1;
  }
  std::string golden(const std::string& file) const { return folder(GetParam()) + "/" + file; }

  TempDir dir_;
  Tokenizer tok_;
  size_t lead_ = 0;      // specials before the text
  size_t specials_ = 0;  // specials in all
};

TEST_P(TokenizerModels, IdsOffsetsTruncationAndDecodeMatchHf) {
  const std::vector<json> rows = read_jsonl(golden("golden.jsonl"));
  ASSERT_GT(rows.size(), 100u) << "run tools/make_tokenizer_models.py";
  int failures = 0;
  for (const json& row : rows) {
    const std::string& text = texts().at(row["id"]);
    SCOPED_TRACE(row["id"].get<std::string>() + ": " + json(text).dump());
    std::vector<TokenSpan> spans, bare, cut;
    ASSERT_TRUE(tok_.encode(text, kNoLimit, &spans).ok());
    ASSERT_TRUE(tok_.tokenize(text, &bare).ok());
    ASSERT_TRUE(tok_.encode(text, kTruncatedMaxLength, &cut).ok());
    const json ids = ids_of(spans);
    const json offsets = offsets_of(spans, {text}, {});
    const bool ok = ids == row["ids"] && offsets == row["offsets"];
    EXPECT_EQ(ids, row["ids"]);
    EXPECT_EQ(offsets, row["offsets"]);
    EXPECT_EQ(json(ids_of(cut)), row["ids_max16"]);
    // tokenize() is encode() without the template's specials.
    ASSERT_EQ(bare.size() + specials_, spans.size());
    for (size_t i = 0; i < bare.size(); ++i) {
      EXPECT_EQ(bare[i].id, spans[i + lead_].id);
      EXPECT_EQ(bare[i].begin, spans[i + lead_].begin);
      EXPECT_EQ(bare[i].end, spans[i + lead_].end);
    }
    std::vector<int64_t> ids64(spans.size());
    for (size_t i = 0; i < spans.size(); ++i) ids64[i] = spans[i].id;
    std::string decoded, skipped;
    size_t bad = 0;
    ASSERT_TRUE(tok_.decode(ids64, false, &decoded, &bad).ok());
    ASSERT_TRUE(tok_.decode(ids64, true, &skipped, &bad).ok());
    EXPECT_EQ(decoded, row["decoded"].get<std::string>());
    EXPECT_EQ(skipped, row["decoded_skip"].get<std::string>());
    if (!ok && ++failures >= kMaxReported) return;
  }
}

TEST_P(TokenizerModels, PairsWithLongestFirstTruncationMatchHf) {
  const std::vector<json> rows = read_jsonl(golden("pairs.jsonl"));
  ASSERT_GT(rows.size(), 100u) << "run tools/make_tokenizer_models.py";
  int failures = 0;
  for (const json& row : rows) {
    const std::string& a = texts().at(row["a"]);
    const std::string& b = texts().at(row["b"]);
    const size_t n = row["max_length"];
    SCOPED_TRACE(json(a).dump() + " / " + json(b).dump() + " max_length " + std::to_string(n));
    std::vector<TokenSpan> spans;
    std::vector<int32_t> type_ids;
    const Status st = tok_.encode_pair(a, b, n, &spans, &type_ids);
    ASSERT_TRUE(st.ok()) << st.to_string();
    // HF's sequence ids say which text each token's offsets index (ids
    // are compared first, so the positions agree).
    const std::vector<int32_t> ids = ids_of(spans);
    std::vector<int> which(spans.size(), 0);
    for (size_t i = 0; i < spans.size() && i < row["sequence_ids"].size(); ++i) {
      which[i] = row["sequence_ids"][i].get<int>();
    }
    bool ok = json(ids) == row["ids"] && json(type_ids) == row["type_ids"];
    EXPECT_EQ(json(ids), row["ids"]);
    EXPECT_EQ(json(type_ids), row["type_ids"]);
    if (ok) {
      const json got = offsets_of(spans, {a, b}, which);
      ok = got == row["offsets"];
      EXPECT_EQ(got, row["offsets"]);
    }
    if (!ok && ++failures >= kMaxReported) return;
  }
}

TEST_P(TokenizerModels, LongDocumentsMatchHf) {
  const std::vector<json> rows = read_jsonl(golden("long.jsonl"));
  ASSERT_FALSE(rows.empty());
  for (const json& row : rows) {
    const std::string text = read_text(source_path(row["file"]));
    std::vector<TokenSpan> spans;
    ASSERT_TRUE(tok_.encode(text, kNoLimit, &spans).ok());
    EXPECT_EQ(spans.size(), row["count"].get<size_t>()) << row["file"];
    EXPECT_EQ(digest(spans, text), row["digest"].get<std::string>()) << row["file"];
  }
}

TEST_P(TokenizerModels, EveryCodePointMatchesHf) {
  const json u = json::parse(read_text(golden("unicode.json")));
  const size_t chunk = u["chunk"];
  const auto& first = u["first"];
  const auto& digests = u["digests"];
  ASSERT_EQ(first.size(), digests.size());
  int failures = 0;
  std::string text;
  std::vector<TokenSpan> spans;
  // Under ASan + UBSan (TESSERA_TEST_SANITIZED) every fourth run: 221 s of
  // the sanitizer suite went to these sweeps, whose memory and UB hazards are
  // the same code paths in every run; the release suite checks every run.
  const size_t step = std::getenv("TESSERA_TEST_SANITIZED") != nullptr ? 4 : 1;
  for (size_t k = 0; k < first.size(); k += step) {
    // The run: `chunk` code points from first[k], surrogates skipped, joined by spaces.
    text.clear();
    char32_t c = first[k].get<char32_t>();
    for (size_t n = 0; n < chunk && c <= 0x10FFFF; ++c) {
      if (c >= 0xD800 && c <= 0xDFFF) continue;
      if (n++) text.push_back(' ');
      char bytes[4];
      text.append(bytes, static_cast<size_t>(encode_utf8(c, bytes)));
    }
    ASSERT_TRUE(tok_.encode(text, kNoLimit, &spans).ok());
    if (digest(spans, text) != digests[k].get<std::string>()) {
      ADD_FAILURE() << "the run of " << chunk << " code points from U+" << std::hex
                    << first[k].get<uint32_t>() << std::dec << " differs from HF";
      if (++failures >= kMaxReported) return;
    }
  }
}

// The shared normalizer steps alone (WordPiece's BertNormalizer is fused into
// its own pass and checked by tokenizer_unicode_test.cc).
class PipelineNormalizers : public ::testing::TestWithParam<std::string> {};

TEST_P(PipelineNormalizers, EveryCodePointMatchesHf) {
  json root = tokenizer_json(GetParam());
  // Prepend changes every code point; the map leaves it out (the script's
  // without_prepend()), the goldens cover it.
  if (json& n = root["normalizer"]; n.value("type", "") == "Sequence") {
    json kept = json::array();
    for (const json& step : n["normalizers"]) {
      if (step.value("type", "") != "Prepend") kept.push_back(step);
    }
    n["normalizers"] = kept;
  }
  tokenizers::Normalizer normalizer;
  ASSERT_TRUE(
      tokenizers::Normalizer::read(tokenizers::JsonFields("tokenizer.json"), root, &normalizer)
          .ok());
  const json u = json::parse(read_text(folder(GetParam()) + "/unicode.json"));
  const json& changed = u["normalized"];
  int failures = 0;
  for (char32_t c = 0; c <= 0x10FFFF; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    char bytes[4];
    const std::string in(bytes, static_cast<size_t>(encode_utf8(c, bytes)));
    tokenizers::NormalizedText t = tokenizers::NormalizedText::original(in, 0, in.size());
    ASSERT_TRUE(normalizer.normalize(&t).ok());
    const auto it = changed.find(std::to_string(static_cast<uint32_t>(c)));
    const std::string expected = it == changed.end() ? in : it->get<std::string>();
    if (t.text != expected) {
      ADD_FAILURE() << "U+" << std::hex << static_cast<uint32_t>(c) << std::dec << ": tessera "
                    << json(t.text).dump() << ", HF " << json(expected).dump();
      if (++failures >= kMaxReported) return;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(HfGoldens, TokenizerModels,
                         ::testing::Values("bpe", "bpe_prefix", "bpe_char", "bpe_qwen2",
                                           "bpe_qwen3_embedding", "bpe_modernbert",
                                           "bpe_split_steps", "unigram", "unigram_steps",
                                           "spm_nfkc", "spm_nfkc_cf", "wordpiece_roberta",
                                           "wordpiece_bert"));
INSTANTIATE_TEST_SUITE_P(HfGoldens, PipelineNormalizers,
                         ::testing::Values("bpe_char", "bpe_qwen2", "unigram", "unigram_steps",
                                           "spm_nfkc", "spm_nfkc_cf"));

}  // namespace
}  // namespace tessera::model
