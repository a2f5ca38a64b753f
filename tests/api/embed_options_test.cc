// Embedder's per-call options on the default model (all-MiniLM-L6-v2, which
// ends with Normalize): prompts, truncation side and Matryoshka dimensions,
// each checked against an equivalent call without the option. The
// sentence-transformers oracle for the same options is
// data/features/expected.json (tests/python).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tessera/embedder.h"

namespace tessera {
namespace {

std::string default_model() { return std::string(TESSERA_SOURCE_DIR) + "/models/all-MiniLM-L6-v2"; }

double worst_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = a.size() == b.size() ? 0 : 1e9;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    worst = std::max(worst, std::abs(double(a[i]) - b[i]));
  }
  return worst;
}

class EmbedOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RuntimeOptions rt;
    rt.threads = 2;
    rt.tuning = "none";
    ASSERT_TRUE(Runtime::create(rt, &runtime_).ok());
    EmbedderOptions options;
    options.model_dir = default_model();
    const Status s = Embedder::load(*runtime_, options, &embedder_);
    ASSERT_TRUE(s.ok()) << s.to_string();
  }
  void TearDown() override {
    embedder_.reset();
    EXPECT_EQ(runtime_->context().allocator().live_bytes(), 0u);
  }
  std::vector<float> embed(const std::vector<std::string>& texts, const EmbedOptions& options) {
    std::vector<float> rows;
    const Status s = embedder_->embed(texts, options, &rows);
    EXPECT_TRUE(s.ok()) << s.to_string();
    return rows;
  }
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<Embedder> embedder_;
};

const std::vector<std::string> kTexts = {"The cat sat on the mat.", "Attention is a contract."};

TEST_F(EmbedOptionsTest, APromptIsPrependedToTheText) {
  EmbedOptions prompted;
  prompted.prompt = "query: ";
  const std::vector<float> a = embed(kTexts, prompted);
  const std::vector<float> b = embed({"query: " + kTexts[0], "query: " + kTexts[1]}, {});
  EXPECT_LE(worst_diff(a, b), 1e-6);
  EXPECT_GT(worst_diff(a, embed(kTexts, {})), 1e-3);  // the prompt changed the vectors
  // This model defines none: "query" and "document" exist, empty, as in
  // sentence-transformers, so asking for them changes nothing.
  EXPECT_EQ(embedder_->prompts().size(), 2u);
  EXPECT_EQ(embedder_->prompts().at("query"), "");
  EXPECT_EQ(embedder_->default_prompt_name(), "");
  EmbedOptions query;
  query.prompt_name = "query";
  EXPECT_LE(worst_diff(embed(kTexts, query), embed(kTexts, {})), 1e-7);
}

TEST_F(EmbedOptionsTest, AnUnknownPromptNameIsRefusedNamingTheKnownOnes) {
  EmbedOptions options;
  options.prompt_name = "passage";
  std::vector<float> rows;
  const Status s = embedder_->embed(kTexts, options, &rows);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("prompt_name = \"passage\""), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("its prompts: document, query"), std::string::npos) << s.message();
}

TEST_F(EmbedOptionsTest, DimensionsKeepTheFirstValuesRenormalised) {
  const std::vector<float> full = embed(kTexts, {});
  EmbedOptions options;
  options.dimensions = 128;
  const std::vector<float> short_rows = embed(kTexts, options);
  ASSERT_EQ(short_rows.size(), 2u * 128);
  const int dim = embedder_->dim();
  for (int r = 0; r < 2; ++r) {
    double norm = 0;
    for (int d = 0; d < 128; ++d) norm += double(full[r * dim + d]) * full[r * dim + d];
    norm = std::sqrt(norm);
    double len = 0;
    for (int d = 0; d < 128; ++d) {
      EXPECT_NEAR(short_rows[r * 128 + d], full[r * dim + d] / norm, 1e-6);
      len += double(short_rows[r * 128 + d]) * short_rows[r * 128 + d];
    }
    EXPECT_NEAR(len, 1.0, 1e-5);
  }
  options.dimensions = dim;  // all of them: the same rows
  EXPECT_LE(worst_diff(embed(kTexts, options), full), 1e-7);
}

TEST_F(EmbedOptionsTest, DimensionsOutsideTheModelAreRefused) {
  for (int bad : {-1, 385}) {
    EmbedOptions options;
    options.dimensions = bad;
    std::vector<float> rows;
    const Status s = embedder_->embed(kTexts, options, &rows);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("dimensions = " + std::to_string(bad)), std::string::npos);
    EXPECT_NE(s.message().find("[1, 384]"), std::string::npos) << s.message();
  }
}

TEST_F(EmbedOptionsTest, LeftTruncationKeepsTheTextsEnd) {
  // 300 words then an ending: cut from the left, the model sees the last
  // 254 tokens (256 with [CLS] and [SEP]), i.e. 252 words and the ending.
  std::string words;
  for (int i = 0; i < 300; ++i) words += "river ";
  std::string tail;
  for (int i = 0; i < 252; ++i) tail += "river ";
  EmbedOptions left;
  left.truncate = true;
  left.truncate_left = true;
  const std::vector<float> a = embed({words + "mountain lake"}, left);
  const std::vector<float> b = embed({tail + "mountain lake"}, {});
  EXPECT_LE(worst_diff(a, b), 1e-6);
  EmbedOptions right;
  right.truncate = true;
  EXPECT_GT(worst_diff(a, embed({words + "mountain lake"}, right)), 1e-3);
}

TEST_F(EmbedOptionsTest, DocumentsTakeThePromptAndDimensionsToo) {
  EmbedOptions options;
  options.prompt = "passage: ";
  options.dimensions = 64;
  std::vector<EmbeddedDocument> docs;
  ASSERT_TRUE(embedder_->embed_documents(kTexts, true, options, &docs).ok());
  const std::vector<float> rows = embed(kTexts, options);
  ASSERT_EQ(docs.size(), 2u);
  for (size_t i = 0; i < docs.size(); ++i) {
    ASSERT_EQ(docs[i].chunks.size(), 1u);
    // Offsets stay in the document's own text: the prompt is not part of it.
    EXPECT_EQ(docs[i].chunks[0].begin, 0);
    EXPECT_EQ(docs[i].chunks[0].end, static_cast<int64_t>(kTexts[i].size()));
    const std::vector<float> row(rows.begin() + i * 64, rows.begin() + (i + 1) * 64);
    EXPECT_LE(worst_diff(docs[i].chunks[0].embedding, row), 1e-6);
    EXPECT_LE(worst_diff(docs[i].embedding, row), 1e-6);
  }
}

}  // namespace
}  // namespace tessera
