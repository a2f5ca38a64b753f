// tessera::Embedder on the default model (scripts/install-deps.sh): texts
// and documents take one path, errors name the input, memory is returned.
#include "tessera/embedder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace tessera {
namespace {

std::string model_dir() { return std::string(TESSERA_SOURCE_DIR) + "/models/all-MiniLM-L6-v2"; }

double max_abs_diff(const float* a, const float* b, int n) {
  double worst = 0;
  for (int i = 0; i < n; ++i) worst = std::max(worst, std::abs(double(a[i]) - b[i]));
  return worst;
}

class EmbedderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RuntimeOptions rt;
    rt.threads = 2;
    rt.tuning = "none";
    ASSERT_TRUE(Runtime::create(rt, &runtime_).ok());
  }
  void TearDown() override {
    embedder_.reset();
    // Every buffer of the model and of each call came from the tracked
    // allocator and went back to it.
    EXPECT_EQ(runtime_->context().allocator().live_bytes(), 0u);
  }
  void load(int max_tokens = 0, int stride = -1) {
    EmbedderOptions options;
    options.model_dir = model_dir();
    options.max_tokens = max_tokens;
    options.stride = stride;
    const Status s = Embedder::load(*runtime_, options, &embedder_);
    ASSERT_TRUE(s.ok()) << s.to_string();
  }
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<Embedder> embedder_;
};

TEST_F(EmbedderTest, MissingModelDirectoryIsNamed) {
  EmbedderOptions options;
  options.model_dir = "/nonexistent/model";
  const Status s = Embedder::load(*runtime_, options, &embedder_);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("/nonexistent/model"), std::string::npos) << s.message();
}

TEST_F(EmbedderTest, WindowOptionsCheckedAgainstTheModel) {
  EmbedderOptions options;
  options.model_dir = model_dir();
  options.max_tokens = 100000;
  const Status s = Embedder::load(*runtime_, options, &embedder_);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("100000"), std::string::npos) << s.message();
}

TEST_F(EmbedderTest, TooLongTextFailsNamingItUnlessTruncated) {
  load();
  std::string long_text;
  for (int i = 0; i < 400; ++i) long_text += "word ";
  std::vector<float> rows;
  Status s = embedder_->embed({"short", long_text}, /*truncate=*/false, &rows);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("texts[1] has 402 tokens"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("at most 256"), std::string::npos) << s.message();
  s = embedder_->embed({"short", long_text}, /*truncate=*/true, &rows);
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(rows.size(), 2u * embedder_->dim());
}

TEST_F(EmbedderTest, EmptyTextIsClsSepAsInSentenceTransformers) {
  load();
  std::vector<float> rows;
  ASSERT_TRUE(embedder_->embed({""}, false, &rows).ok());
  double norm = 0;
  for (float x : rows) norm += double(x) * x;
  EXPECT_NEAR(std::sqrt(norm), 1.0, 1e-5);
}

TEST_F(EmbedderTest, InvalidUtf8TextIsAnErrorNamingIt) {
  load();
  std::vector<float> rows;
  const Status s = embedder_->embed({"fine", std::string("bad \xff")}, false, &rows);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("texts[1]: the tokenizer refused"), std::string::npos)
      << s.message();
}

TEST_F(EmbedderTest, TextAndOneChunkDocumentGiveTheSameVector) {
  load();
  const std::vector<std::string> texts = {"The cat sat on the mat.", "Attention is a contract."};
  std::vector<float> rows;
  ASSERT_TRUE(embedder_->embed(texts, false, &rows).ok());
  std::vector<EmbeddedDocument> docs;
  ASSERT_TRUE(embedder_->embed_documents(texts, false, &docs).ok());
  ASSERT_EQ(docs.size(), 2u);
  for (size_t i = 0; i < texts.size(); ++i) {
    ASSERT_EQ(docs[i].chunks.size(), 1u);
    EXPECT_EQ(docs[i].chunks[0].begin, 0);
    EXPECT_EQ(docs[i].chunks[0].end, static_cast<int64_t>(texts[i].size()));  // ASCII
    EXPECT_LE(max_abs_diff(rows.data() + i * embedder_->dim(), docs[i].chunks[0].embedding.data(),
                           embedder_->dim()),
              1e-6);
  }
  // Different texts, different vectors (the comparison above can fail).
  EXPECT_GT(max_abs_diff(rows.data(), rows.data() + embedder_->dim(), embedder_->dim()), 1e-3);
}

TEST_F(EmbedderTest, LongDocumentChunksCoverItAndTheMeanIsNormalized) {
  load(/*max_tokens=*/32, /*stride=*/8);
  std::string doc;
  for (int i = 0; i < 60; ++i) doc += "Sentence number " + std::to_string(i) + " is here. ";
  std::vector<EmbeddedDocument> docs;
  ASSERT_TRUE(embedder_->embed_documents({doc, ""}, /*doc_embedding=*/true, &docs).ok());
  ASSERT_EQ(docs.size(), 2u);
  const auto& chunks = docs[0].chunks;
  ASSERT_GT(chunks.size(), 5u);
  EXPECT_EQ(chunks.front().begin, 0);
  EXPECT_EQ(chunks.back().end, static_cast<int64_t>(doc.find_last_not_of(' ') + 1));
  for (size_t c = 1; c < chunks.size(); ++c) {
    EXPECT_LT(chunks[c].begin, chunks[c - 1].end) << "chunks overlap";
    EXPECT_GT(chunks[c].begin, chunks[c - 1].begin);
  }
  double norm = 0;
  for (float x : docs[0].embedding) norm += double(x) * x;
  EXPECT_NEAR(std::sqrt(norm), 1.0, 1e-5);
  EXPECT_TRUE(docs[1].chunks.empty());
  EXPECT_EQ(docs[1].problem, "empty document");
}

TEST_F(EmbedderTest, InvalidUtf8DocumentIsAProblemNotACrash) {
  load();
  std::vector<EmbeddedDocument> docs;
  ASSERT_TRUE(embedder_->embed_documents({"ok", std::string("bad \xff\xfe bytes")}, false, &docs)
                  .ok());
  EXPECT_EQ(docs[0].chunks.size(), 1u);
  EXPECT_TRUE(docs[1].chunks.empty());
  EXPECT_FALSE(docs[1].problem.empty());
}

}  // namespace
}  // namespace tessera
