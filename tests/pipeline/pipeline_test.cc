#include "pipeline/pipeline.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "pipeline/utf8_text.h"
#include "support/fake_model.h"
#include "temp_dir.h"

namespace tessera::pipeline {
namespace {

using tessera::testing::FakeModel;
using testing::TempDir;

struct Row {
  nlohmann::json id;
  int64_t chunk, chunks, begin, end;
  std::vector<float> embedding;
};

class MemoryWriter : public EmbeddingWriter {
 public:
  explicit MemoryWriter(int dim) : dim_(dim) {}
  Status write(const OutputRow& r, const float* e) override {
    rows.push_back({*r.id, r.chunk, r.chunks, r.begin, r.end, std::vector<float>(e, e + dim_)});
    return Status::Ok();
  }
  Status finish() override { return Status::Ok(); }
  std::vector<Row> rows;

 private:
  int dim_;
};

// Space-separated words "w0 w1 ..." where some words carry multi-byte letters.
std::string words(int n, const std::string& tag) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    s += (i ? " " : "") + tag + std::to_string(i) + (i % 3 == 0 ? "\xC3\xA9" : "") +
         (i % 5 == 0 ? "\xE4\xB8\xAD" : "");
  }
  return s;
}

// Substring of UTF-8 text by code point offsets [begin, end).
std::string by_code_points(const std::string& text, int64_t begin, int64_t end) {
  const CodePointIndex cp(text);
  size_t b = 0, e = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      if (cp.at(static_cast<int64_t>(i)) == begin) b = i;
      if (cp.at(static_cast<int64_t>(i)) == end) e = i;
    }
  }
  return text.substr(b, e - b);
}

struct RunResult {
  Status status;
  PipelineStats stats;
  std::vector<Problem> problems;
  std::vector<Row> rows;
};

RunResult run_jsonl(const std::string& jsonl, FakeModel& model, PipelineOptions options) {
  std::istringstream in(jsonl);
  ReaderOptions ro;
  ro.stdin_stream = &in;
  ro.stdin_format = StdinFormat::kJsonl;
  std::unique_ptr<DocumentReader> reader;
  EXPECT_TRUE(DocumentReader::open({"-"}, ro, &reader).ok());
  RunResult run;
  {
    Context ctx(ContextOptions{2});
    EXPECT_TRUE(resolve_options(model, &options).ok());
    MemoryWriter writer(model.dim());
    PipelineCallbacks callbacks;
    callbacks.on_problem = [&](const Problem& p) { run.problems.push_back(p); };
    run.status = run_pipeline(*reader, model, options, writer, ctx, callbacks, &run.stats);
    run.rows = std::move(writer.rows);
    EXPECT_TRUE(ctx.allocator().leaks().empty());
  }
  return run;
}

std::string record(const nlohmann::json& id, const std::string& text) {
  return nlohmann::json{{"id", id}, {"text", text}}.dump() + "\n";
}

TEST(Pipeline, RowsInInputOrderWithTheirOwnEmbeddingWhateverTheBatching) {
  // Mixed lengths so that sorting by length reorders the chunks.
  std::string jsonl;
  std::vector<std::string> texts;
  for (int d = 0; d < 12; ++d) {
    texts.push_back(words(1 + (d * 7919) % 40, "d" + std::to_string(d) + "w"));
    jsonl +=
        record(d % 2 ? nlohmann::json(d) : nlohmann::json("doc" + std::to_string(d)), texts.back());
  }
  std::vector<std::vector<Row>> outputs;
  for (int64_t budget : {16, 40, 100000}) {
    for (int64_t round_bytes : {1, 1 << 20}) {
      FakeModel model(8, 16);
      PipelineOptions options;
      options.window = {0, 4};
      options.batch_tokens = budget;
      options.round_bytes = round_bytes;
      RunResult run = run_jsonl(jsonl, model, options);
      ASSERT_TRUE(run.status.ok()) << run.status.to_string();
      EXPECT_EQ(run.stats.documents, 12);
      EXPECT_EQ(run.stats.skipped, 0);
      EXPECT_LE(model.max_batch_tokens(), budget);
      // Each row's embedding is the one of the window it names.
      size_t r = 0;
      for (int d = 0; d < 12; ++d) {
        std::vector<model::TokenSpan> tokens;
        ASSERT_TRUE(model.tokenize(texts[d], &tokens).ok());
        const auto windows = plan_windows(tokens, texts[d], {16, 4});
        for (size_t k = 0; k < windows.size(); ++k, ++r) {
          ASSERT_LT(r, run.rows.size());
          const Row& row = run.rows[r];
          EXPECT_EQ(row.id, d % 2 ? nlohmann::json(d) : nlohmann::json("doc" + std::to_string(d)));
          EXPECT_EQ(row.chunk, static_cast<int64_t>(k));
          std::vector<int32_t> seq = {FakeModel::kCls};
          for (int64_t t = windows[k].begin; t < windows[k].end; ++t) seq.push_back(tokens[t].id);
          seq.push_back(FakeModel::kSep);
          std::vector<float> expect(8);
          model.embed_one(seq, expect.data());
          EXPECT_EQ(row.embedding, expect) << "doc " << d << " chunk " << k;
        }
      }
      EXPECT_EQ(r, run.rows.size());
      EXPECT_EQ(run.stats.rows, static_cast<int64_t>(r));
      EXPECT_EQ(run.stats.chunks, static_cast<int64_t>(r));
      outputs.push_back(std::move(run.rows));
    }
  }
  for (size_t i = 1; i < outputs.size(); ++i) {
    ASSERT_EQ(outputs[i].size(), outputs[0].size());
    for (size_t r = 0; r < outputs[0].size(); ++r) {
      EXPECT_EQ(outputs[i][r].embedding, outputs[0][r].embedding);
    }
  }
}

TEST(Pipeline, ChunkOffsetsAreCodePointsCoveringTheWindowText) {
  const std::string text = "  " + words(50, "x") + "\n";
  FakeModel model(4, 12);  // 10 content tokens per window
  PipelineOptions options;
  options.window = {0, 3};
  RunResult run = run_jsonl(record("long", text), model, options);
  ASSERT_TRUE(run.status.ok());
  ASSERT_EQ(run.rows.size(), 7u);  // step 7: windows start at 0, 7, ..., 42
  for (size_t k = 0; k < run.rows.size(); ++k) {
    const Row& row = run.rows[k];
    const int first = static_cast<int>(7 * k);
    const int last = std::min(first + 10, 50) - 1;
    const std::string chunk = by_code_points(text, row.begin, row.end);
    std::string expect;
    for (int w = first; w <= last; ++w) {
      std::string one = words(w + 1, "x");
      expect += (w > first ? " " : "") + one.substr(one.rfind(' ') + 1);
    }
    EXPECT_EQ(chunk, expect) << "chunk " << k;
  }
  EXPECT_EQ(run.rows.front().begin, 2);
  // The last chunk ends at the last character before the newline.
  EXPECT_EQ(run.rows.back().end, CodePointIndex(text).size() - 1);
}

TEST(Pipeline, BadDocumentsAreCountedAndSkippedTheOthersWritten) {
  const std::string jsonl = record("a", "good one") + record("empty", "") +
                            "{\"id\": \"broken\"\n" + record("blank", " \n\t ") +
                            "{\"id\": \"nt\"}\n" + record("b", "good two");
  FakeModel model(4, 16);
  RunResult run = run_jsonl(jsonl, model, {});
  ASSERT_TRUE(run.status.ok());
  EXPECT_EQ(run.stats.documents, 2);
  EXPECT_EQ(run.stats.skipped, 4);
  ASSERT_EQ(run.rows.size(), 2u);
  EXPECT_EQ(run.rows[0].id, "a");
  EXPECT_EQ(run.rows[1].id, "b");
  ASSERT_EQ(run.problems.size(), 4u);
  std::vector<std::string> origins;
  for (const auto& p : run.problems) origins.push_back(p.origin);
  // Reader problems come as read; empty documents after their round's tokenization.
  EXPECT_EQ(origins, (std::vector<std::string>{"stdin:3", "stdin:5", "stdin:2", "stdin:4"}));
  EXPECT_EQ(run.problems[2].message, "empty document");
  EXPECT_NE(run.problems[3].message.find("no tokens"), std::string::npos);
}

TEST(Pipeline, DocumentEmbeddingIsTheNormalizedMeanOfItsChunks) {
  const std::string jsonl = record("long", words(30, "y")) + record("short", "one two");
  FakeModel model(6, 10);
  PipelineOptions options;
  options.window = {0, 2};
  RunResult chunks = run_jsonl(jsonl, model, options);
  options.doc_embedding = true;
  RunResult docs = run_jsonl(jsonl, model, options);
  ASSERT_TRUE(docs.status.ok());
  ASSERT_EQ(docs.rows.size(), 2u);
  const int64_t n = static_cast<int64_t>(chunks.rows.size()) - 1;  // chunks of "long"
  EXPECT_EQ(docs.rows[0].chunks, n);
  EXPECT_EQ(docs.rows[1].chunks, 1);
  EXPECT_EQ(docs.rows[0].begin, chunks.rows[0].begin);
  EXPECT_EQ(docs.rows[0].end, chunks.rows[n - 1].end);
  std::vector<double> mean(6, 0.0);
  for (int64_t k = 0; k < n; ++k) {
    for (int j = 0; j < 6; ++j) mean[j] += chunks.rows[k].embedding[j];
  }
  double norm = 0;
  for (double v : mean) norm += v * v;
  norm = std::sqrt(norm);
  for (int j = 0; j < 6; ++j) EXPECT_NEAR(docs.rows[0].embedding[j], mean[j] / norm, 1e-6);
  EXPECT_EQ(docs.rows[1].embedding, chunks.rows[n].embedding);
}

TEST(Pipeline, AttentionBackendAndStageTimesComeFromTheProfiler) {
  std::string jsonl;
  for (int d = 0; d < 20; ++d) jsonl += record(d, words(10 + d, "p"));
  FakeModel model(4, 16);
  PipelineOptions options;
  options.batch_tokens = 32;
  std::istringstream in(jsonl);
  ReaderOptions ro;
  ro.stdin_stream = &in;
  ro.stdin_format = StdinFormat::kJsonl;
  std::unique_ptr<DocumentReader> reader;
  ASSERT_TRUE(DocumentReader::open({"-"}, ro, &reader).ok());
  Context ctx(ContextOptions{1});
  Span before;  // recorded before the run: not counted
  before.name = "attention";
  before.backend = "fake.attention";
  before.duration_ns = 5000000000;
  ctx.profiler().record(before);
  ASSERT_TRUE(resolve_options(model, &options).ok());
  MemoryWriter writer(4);
  PipelineStats stats;
  ASSERT_TRUE(run_pipeline(*reader, model, options, writer, ctx, {}, &stats).ok());
  EXPECT_GT(model.calls(), 1);
  EXPECT_EQ(stats.batches, model.calls());
  ASSERT_EQ(stats.attention.size(), 1u);
  EXPECT_EQ(stats.attention["fake.attention"].calls, model.calls());
  EXPECT_NEAR(stats.attention_ns, 1000000.0 * model.calls(), 1000.0);
  ASSERT_EQ(stats.stage_ns.count("layer.qkv_gemm"), 1u) << "layers are merged";
  EXPECT_NEAR(stats.stage_ns["layer.qkv_gemm"], 2000000.0 * model.calls(), 1000.0);
}

TEST(Pipeline, ModelFailureIsFatal) {
  FakeModel model(4, 16);
  model.fail_on_call(0);
  RunResult run = run_jsonl(record("a", "some words"), model, {});
  EXPECT_FALSE(run.status.ok());
  EXPECT_NE(run.status.message().find("fake failure"), std::string::npos);
  EXPECT_TRUE(run.rows.empty());
}

TEST(Pipeline, OptionsAreCheckedAgainstTheModel) {
  FakeModel model(4, 16);
  PipelineOptions options;
  options.window.max_tokens = 17;
  Status s = resolve_options(model, &options);
  EXPECT_NE(s.message().find("max_tokens = 17 exceeds the model's max_seq_length 16"),
            std::string::npos)
      << s.message();
  options = {};
  options.batch_tokens = 8;
  s = resolve_options(model, &options);
  EXPECT_NE(s.message().find("batch_tokens = 8"), std::string::npos) << s.message();
  options = {};
  EXPECT_TRUE(resolve_options(model, &options).ok());
  EXPECT_EQ(options.window.max_tokens, 16);
}

}  // namespace
}  // namespace tessera::pipeline
