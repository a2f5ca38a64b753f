// A long-context model's whole window is one sequence: a document of up to
// max_seq_length tokens (8,192 for ModernBERT; 32,768 here) is one chunk in
// one batch, whatever the template adds, with the default batch budget
// scaled to it and no buffer that grows with the square of its length.
// (tests/pipeline/long_context_test.py does the same on real models.)
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "pipeline/pipeline.h"
#include "pipeline/text_embedding.h"
#include "support/fake_model.h"

namespace tessera::pipeline {
namespace {

using tessera::testing::FakeModel;

struct LongWriter final : EmbeddingWriter {
  explicit LongWriter(int dim) : dim(dim) {}
  Status write(const OutputRow& row, const float* embedding) override {
    rows.emplace_back(embedding, embedding + dim);
    offsets.emplace_back(row.begin, row.end);
    return Status::Ok();
  }
  Status finish() override { return Status::Ok(); }
  int dim;
  std::vector<std::vector<float>> rows;
  std::vector<std::pair<int64_t, int64_t>> offsets;
};

std::string numbered_words(int64_t n) {
  std::string text;
  for (int64_t i = 0; i < n; ++i) text += (i ? " w" : "w") + std::to_string(i % 997);
  return text;
}

struct LongRun {
  Status status;
  PipelineStats stats;
  LongWriter writer{4};
  int64_t peak_bytes = 0;
};

void run_text(FakeModel& model, const std::string& text, PipelineOptions options, LongRun* run) {
  std::istringstream in(text);
  ReaderOptions ro;
  ro.stdin_stream = &in;
  std::unique_ptr<DocumentReader> reader;
  ASSERT_TRUE(DocumentReader::open({"-"}, ro, &reader).ok());
  Context ctx(ContextOptions{1});
  run->status = resolve_options(model, &options);
  if (!run->status.ok()) return;
  run->status = run_pipeline(*reader, model, options, run->writer, ctx, {}, &run->stats);
  run->peak_bytes = static_cast<int64_t>(ctx.allocator().peak_bytes());
}

const model::SequenceFrame kShapes[] = {
    {{FakeModel::kCls}, {FakeModel::kSep}},  // [CLS] $A [SEP]
    {{}, {FakeModel::kSep}},                 // $A <|endoftext|>
    {{}, {}},                                // $A
};

TEST(LongContext, AWholeWindowIsOneSequenceInOneBatch) {
  constexpr int kContext = 32768;  // past the default batch budget (8192)
  for (const model::SequenceFrame& frame : kShapes) {
    SCOPED_TRACE(frame.specials());
    FakeModel model(4, kContext);
    model.set_frame(frame);
    const std::string text = numbered_words(kContext - frame.specials());
    LongRun run;
    run_text(model, text, {}, &run);
    ASSERT_TRUE(run.status.ok()) << run.status.to_string();
    ASSERT_EQ(run.writer.rows.size(), 1u);
    EXPECT_EQ(run.stats.chunks, 1);
    EXPECT_EQ(run.stats.batches, 1);
    EXPECT_EQ(run.stats.tokens, kContext);
    EXPECT_EQ(run.writer.rows[0], model.expected_row(model.ids_of(text)));
    EXPECT_EQ(run.writer.offsets[0],
              (std::pair<int64_t, int64_t>{0, static_cast<int64_t>(text.size())}));
    // Linear in the length: nothing S x S (4 GiB of floats here) was allocated.
    EXPECT_LT(run.peak_bytes, int64_t{kContext} * 1024) << run.peak_bytes;

    // One token more is two windows.
    LongRun two;
    run_text(model, text + " w", {}, &two);
    ASSERT_TRUE(two.status.ok()) << two.status.to_string();
    EXPECT_EQ(two.writer.rows.size(), 2u);

    // The texts path (Embedder::embed, /embed) gives the same vector.
    TextOptions text_options;
    text_options.batch_tokens = kDefaultBatchTokens;  // one longer sequence runs alone
    std::vector<float> row(4);
    Context ctx(ContextOptions{1});
    ASSERT_TRUE(embed_texts(model, {text}, text_options, ctx, row.data()).ok());
    EXPECT_EQ(row, run.writer.rows[0]);
  }
}

TEST(LongContext, BatchBudgetScalesUnlessAskedAndLimitsNameBothNumbers) {
  FakeModel model(4, 32768);
  PipelineOptions options;
  ASSERT_TRUE(resolve_options(model, &options).ok());
  EXPECT_EQ(options.window.max_tokens, 32768);
  EXPECT_EQ(options.batch_tokens, 32768);
  options = {};
  options.window.max_tokens = 512;
  ASSERT_TRUE(resolve_options(model, &options).ok());
  EXPECT_EQ(options.batch_tokens, kDefaultBatchTokens);
  options = {};
  options.batch_tokens = 8192;  // asked for: kept, and refused
  Status s = resolve_options(model, &options);
  EXPECT_EQ(s.option(), "batch_tokens");
  EXPECT_NE(s.message().find("batch_tokens = 8192 is below the window of 32768 tokens"),
            std::string::npos)
      << s.message();
  options = {};
  options.window.max_tokens = 32769;
  s = resolve_options(model, &options);
  EXPECT_NE(s.message().find("max_tokens = 32769 exceeds the model's max_seq_length 32768"),
            std::string::npos)
      << s.message();
}

TEST(LongContext, SpecialsComeFromTheModelsFrame) {
  for (const model::SequenceFrame& frame : kShapes) {
    FakeModel model(4, 64);
    model.set_frame(frame);
    PipelineOptions options;
    options.window.max_tokens = 16;
    ASSERT_TRUE(resolve_options(model, &options).ok());
    EXPECT_EQ(options.window.specials, frame.specials());
    EXPECT_EQ(options.window.stride, (16 - frame.specials()) / 4);
    LongRun run;
    run_text(model, numbered_words(100), options, &run);
    ASSERT_TRUE(run.status.ok()) << run.status.to_string();
    // Every window is full but the last (plain words: no better cut): its
    // text tokens are 16 - specials, framed as the template says.
    std::vector<model::TokenSpan> tokens;
    ASSERT_TRUE(model.tokenize(numbered_words(100), &tokens).ok());
    const std::vector<Window> windows = plan_windows(100, options.window);
    ASSERT_EQ(run.writer.rows.size(), windows.size());
    for (size_t i = 0; i < windows.size(); ++i) {
      if (i + 1 < windows.size()) {
        EXPECT_EQ(windows[i].end - windows[i].begin, 16 - frame.specials());
      }
      std::vector<int32_t> seq;
      frame_window(tokens, windows[i], frame, &seq);
      EXPECT_EQ(run.writer.rows[i], model.expected_row(seq)) << "window " << i;
    }
  }
}

TEST(LongContext, AnEmptyTextWithoutSpecialsIsRefused) {
  FakeModel model(4, 16);
  model.set_frame({{}, {}});
  std::vector<std::vector<int32_t>> sequences;
  int64_t tokens = 0;
  TextOptions options;
  const Status s = frame_texts(model, {"a", ""}, options, &sequences, &tokens);
  EXPECT_NE(s.message().find("texts[1] has no tokens"), std::string::npos) << s.message();
  model.set_frame({{}, {FakeModel::kSep}});
  ASSERT_TRUE(frame_texts(model, {"a", ""}, options, &sequences, &tokens).ok());
  EXPECT_EQ(sequences[1], std::vector<int32_t>{FakeModel::kSep});
  options.max_tokens = 20;
  EXPECT_NE(frame_texts(model, {"a"}, options, &sequences, &tokens)
                .message()
                .find("max_tokens = 20: must be in [2, 16]"),
            std::string::npos);
}

// Token-id inputs (OpenAI's [[int]]) are framed, cut and refused as the
// tokens of their text: with the prompt first, from either end.
TEST(TextFraming, TokenIdsFrameAsTheirTextDoes) {
  FakeModel model(4, 8);
  const std::string text = "w1 w2 w3 w4 w5 w6 w7 w8";
  std::vector<int32_t> ids = model.ids_of(text);
  ids = {ids.begin() + 1, ids.end() - 1};  // without [CLS] and [SEP]
  TextOptions options;
  options.prompt = "p: ";
  options.field = "input";
  std::vector<std::vector<int32_t>> from_text, from_ids;
  int64_t text_tokens = 0, id_tokens = 0;
  for (bool left : {false, true}) {
    options.truncate = true;
    options.truncate_left = left;
    ASSERT_TRUE(frame_texts(model, {text}, options, &from_text, &text_tokens).ok());
    ASSERT_TRUE(frame_token_ids(model, {ids}, options, &from_ids, &id_tokens).ok());
    EXPECT_EQ(from_ids, from_text) << left;
    EXPECT_EQ(id_tokens, 8);
  }
  options.truncate = false;
  size_t failed = 0;
  const Status s = frame_token_ids(model, {{5}, ids}, options, &from_ids, &id_tokens, &failed);
  EXPECT_EQ(failed, 1u);
  EXPECT_NE(s.message().find("input[1] has 11 tokens ([CLS] and [SEP] and the prompt included)"),
            std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace tessera::pipeline
