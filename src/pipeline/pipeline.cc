#include "pipeline/pipeline.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include "model/stage_span.h"
#include "pipeline/batching.h"
#include "pipeline/embedding_output.h"
#include "pipeline/prompts.h"
#include "pipeline/utf8_text.h"
#include "tessera/allocator.h"
#include "tessera/profiler.h"

namespace tessera::pipeline {

namespace {

constexpr double kNsPerSecond = 1e9;

using Aggregates = std::map<std::pair<std::string, std::string>, SpanAggregate>;

// (nlohmann::json's noexcept move checks an invariant that clang-tidy 14
// cannot prove non-throwing, hence the NOLINT on the implicit move.)
struct RoundDoc {  // NOLINT(bugprone-exception-escape)
  Document doc;
  std::vector<model::TokenSpan> tokens;
  std::string problem;  // non-empty: reported and skipped
  int64_t first_chunk = 0;
  int64_t num_chunks = 0;
};

struct Chunk {
  int64_t doc = 0;  // index into the round
  Window window;
};

class Runner {
 public:
  Runner(DocumentReader& reader, EmbeddingModel& model, const PipelineOptions& options,
         EmbeddingWriter& writer, Context& ctx, const PipelineCallbacks& callbacks,
         PipelineStats* stats)
      : reader_(reader),
        model_(model),
        options_(options),
        window_(options.window),
        dims_(options.dimensions > 0 ? options.dimensions : model.dim()),
        writer_(writer),
        ctx_(ctx),
        callbacks_(callbacks),
        stats_(*stats) {}

  Status run() {
    const auto start = std::chrono::steady_clock::now();
    const auto baseline = ctx_.profiler().aggregates();
    std::vector<RoundDoc> docs;
    Status status;
    while (status.ok() && fill_round(&docs)) {
      tokenize(docs);
      status = embed_and_write(docs);
      if (status.ok() && callbacks_.on_round_written) status = callbacks_.on_round_written(stats_);
    }
    stats_.elapsed_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now() - start)
                            .count();
    add_profile(baseline, ctx_.profiler().aggregates());
    return status;
  }

 private:
  void report(const Problem& problem) {
    ++stats_.skipped;
    if (callbacks_.on_problem) callbacks_.on_problem(problem);
  }

  // Reads the next round of documents; false when the input is exhausted.
  bool fill_round(std::vector<RoundDoc>* docs) {
    docs->clear();
    model::StageSpan span(ctx_.profiler(), "pipeline.read");
    int64_t bytes = 0;
    while (bytes < options_.round_bytes &&
           static_cast<int64_t>(docs->size()) < options_.round_documents) {
      RoundDoc rd;
      Problem problem;
      const auto item = reader_.next(&rd.doc, &problem);
      if (item == DocumentReader::Item::kEnd) break;
      ++stats_.items;
      if (item == DocumentReader::Item::kProblem) {
        report(problem);
        continue;
      }
      bytes += static_cast<int64_t>(rd.doc.text.size());
      docs->push_back(std::move(rd));
    }
    return !docs->empty();
  }

  // Tokenizes the round's documents in parallel; marks the ones with no tokens.
  void tokenize(std::vector<RoundDoc>& docs) {
    model::StageSpan span(ctx_.profiler(), "pipeline.tokenize",
                          "docs=" + std::to_string(docs.size()));
    ctx_.pool().parallel_for(static_cast<int64_t>(docs.size()), [&](int64_t i, int) {
      RoundDoc& rd = docs[i];
      Status s = model_.tokenize(rd.doc.text, &rd.tokens);
      if (!s.ok()) {
        rd.problem = "tokenizer: " + s.message();
      } else if (rd.tokens.empty()) {
        rd.problem = empty_document_problem(rd.doc.text);
      }
    });
  }

  Status embed_and_write(std::vector<RoundDoc>& docs) {
    std::vector<Chunk> chunks;
    std::vector<int64_t> lengths;
    for (int64_t d = 0; d < static_cast<int64_t>(docs.size()); ++d) {
      RoundDoc& rd = docs[d];
      if (!rd.problem.empty()) continue;
      rd.first_chunk = static_cast<int64_t>(chunks.size());
      for (const Window& w : plan_windows(rd.tokens, rd.doc.text, window_)) {
        chunks.push_back({d, w});
        lengths.push_back(w.end - w.begin + window_.specials);
      }
      rd.num_chunks = static_cast<int64_t>(chunks.size()) - rd.first_chunk;
    }
    Buffer embeddings;
    if (!chunks.empty()) TESSERA_RETURN_IF_ERROR(embed_chunks(docs, chunks, lengths, &embeddings));
    return write_round(docs, chunks, embeddings.as<float>());
  }

  // Embeds every chunk into *out (chunks.size() x dim floats, chunk order).
  Status embed_chunks(const std::vector<RoundDoc>& docs, const std::vector<Chunk>& chunks,
                      const std::vector<int64_t>& lengths, Buffer* out) {
    const int64_t dim = model_.dim();
    const std::vector<Batch> batches = plan_batches(lengths, options_.batch_tokens);
    size_t widest = 0;
    for (const Batch& b : batches) widest = std::max(widest, b.chunks.size());
    TESSERA_RETURN_IF_ERROR(Buffer::allocate(ctx_.allocator(), chunks.size() * dim * sizeof(float),
                                             "pipeline.embeddings", out));
    Buffer batch_out;
    TESSERA_RETURN_IF_ERROR(Buffer::allocate(ctx_.allocator(), widest * dim * sizeof(float),
                                             "pipeline.batch", &batch_out));
    std::vector<std::vector<int32_t>> sequences;
    for (const Batch& batch : batches) {
      sequences.resize(batch.chunks.size());
      for (size_t s = 0; s < batch.chunks.size(); ++s) {
        const Chunk& c = chunks[batch.chunks[s]];
        frame_window(docs[c.doc].tokens, c.window, options_.frame, &sequences[s]);
      }
      TESSERA_RETURN_IF_ERROR(model_.embed(sequences, ctx_, batch_out.as<float>()));
      for (size_t s = 0; s < batch.chunks.size(); ++s) {
        std::memcpy(out->as<float>() + batch.chunks[s] * dim, batch_out.as<float>() + s * dim,
                    dim * sizeof(float));
      }
      ++stats_.batches;
      stats_.tokens += batch.tokens;
      stats_.chunks += static_cast<int64_t>(batch.chunks.size());
      if (callbacks_.on_progress) {
        callbacks_.on_progress(stats_, reader_.bytes_read(), reader_.bytes_total());
      }
    }
    return Status::Ok();
  }

  Status write_round(const std::vector<RoundDoc>& docs, const std::vector<Chunk>& chunks,
                     const float* embeddings) {
    model::StageSpan span(ctx_.profiler(), "pipeline.write");
    const int dim = model_.dim();
    std::vector<float> mean(dims_);
    std::vector<float> shaped;
    // A document's rows as the writer gets them: their first dims_ values
    // (re-normalised when the model normalises).
    auto shape = [&](const float* rows, int64_t n) {
      if (dims_ == dim) return rows;
      shaped.assign(rows, rows + n * dim);
      shorten_rows(shaped.data(), n, dim, dims_, model_.normalized());
      return static_cast<const float*>(shaped.data());
    };
    for (const RoundDoc& rd : docs) {
      if (!rd.problem.empty()) {
        report({rd.doc.origin, rd.problem, rd.doc.id});
        continue;
      }
      if (!all_finite(embeddings + rd.first_chunk * dim, rd.num_chunks * dim)) {
        report({rd.doc.origin, "the model produced a non-finite embedding", rd.doc.id});
        continue;
      }
      const float* rows = shape(embeddings + rd.first_chunk * dim, rd.num_chunks);
      const CodePointIndex cp(rd.doc.text);
      auto offsets = [&](const Chunk& c) { return window_code_points(rd.tokens, c.window, cp); };
      if (options_.doc_embedding) {
        OutputRow row{&rd.doc.id, 0, rd.num_chunks, offsets(chunks[rd.first_chunk]).first,
                      offsets(chunks[rd.first_chunk + rd.num_chunks - 1]).second};
        mean_of_rows(rows, rd.num_chunks, dims_, model_.normalized(), mean.data());
        TESSERA_RETURN_IF_ERROR(writer_.write(row, mean.data()));
        ++stats_.rows;
      } else {
        for (int64_t k = 0; k < rd.num_chunks; ++k) {
          const auto [begin, end] = offsets(chunks[rd.first_chunk + k]);
          OutputRow row{&rd.doc.id, k, 0, begin, end};
          TESSERA_RETURN_IF_ERROR(writer_.write(row, rows + k * dims_));
          ++stats_.rows;
        }
      }
      ++stats_.documents;
    }
    return Status::Ok();
  }

  // Adds the spans recorded during the run (the profiler's aggregates, which
  // keep everything however many spans its ring drops) to the stats.
  void add_profile(const Aggregates& before, const Aggregates& after) {
    for (const auto& [key, agg] : after) {
      const auto& [name, backend] = key;
      const auto prior = before.find(key);
      const uint64_t calls = agg.count - (prior == before.end() ? 0 : prior->second.count);
      const double secs = agg.seconds - (prior == before.end() ? 0.0 : prior->second.seconds);
      if (calls == 0) continue;
      const auto ns = static_cast<int64_t>(secs * kNsPerSecond);
      // One line per stage: every layer's "model.layerN.qkv_gemm" under its
      // stage, "layer.qkv_gemm" (model/stage_span.h).
      stats_.stage_ns[agg.stage.empty() ? name : agg.stage] += ns;
      if (name != "attention") continue;
      BackendUse& use = stats_.attention[backend];
      use.calls += static_cast<int64_t>(calls);
      use.ns += ns;
      stats_.attention_ns += ns;
    }
  }

  DocumentReader& reader_;
  EmbeddingModel& model_;
  const PipelineOptions& options_;
  const WindowOptions window_;  // options_.window, its specials options_.frame's
  const int dims_;              // values per written row
  EmbeddingWriter& writer_;
  Context& ctx_;
  const PipelineCallbacks& callbacks_;
  PipelineStats& stats_;
};

}  // namespace

void mean_of_rows(const float* rows, int64_t n, int dim, bool renormalize, float* out) {
  std::fill(out, out + dim, 0.0f);
  for (int64_t r = 0; r < n; ++r) {
    for (int i = 0; i < dim; ++i) out[i] += rows[r * dim + i];
  }
  double norm2 = 0;
  for (int i = 0; i < dim; ++i) {
    out[i] /= static_cast<float>(n);
    norm2 += static_cast<double>(out[i]) * out[i];
  }
  if (!renormalize || norm2 <= 0) return;
  const float inv = static_cast<float>(1.0 / std::sqrt(norm2));
  for (int i = 0; i < dim; ++i) out[i] *= inv;
}

Status resolve_options(const EmbeddingModel& model, PipelineOptions* options) {
  const int limit = model.max_seq_length();
  if (options->window.max_tokens == 0) options->window.max_tokens = limit;
  if (options->window.max_tokens > limit) {
    return invalid_option("max_tokens", " = " + std::to_string(options->window.max_tokens) +
                                            " exceeds the model's max_seq_length " +
                                            std::to_string(limit));
  }
  if (options->dimensions != 0) {
    TESSERA_RETURN_IF_ERROR(check_dimensions(options->dimensions, model.dim(), "dimensions"));
  }
  options->frame = model.frame();
  std::vector<model::TokenSpan> prompt;
  TESSERA_RETURN_IF_ERROR(prompt_tokens(model, options->prompt, &prompt));
  for (const model::TokenSpan& t : prompt) options->frame.prefix.push_back(t.id);
  options->window.specials = options->frame.specials();
  if (options->window.max_tokens < options->window.specials + 1) {
    return invalid_option("max_tokens", " = " + std::to_string(options->window.max_tokens) +
                                            " leaves no room for text after the " +
                                            std::to_string(options->window.specials) +
                                            " tokens of the model's specials and the prompt");
  }
  if (options->window.stride < 0) {
    options->window.stride =
        std::min(kDefaultStride, (options->window.max_tokens - options->window.specials) / 4);
  }
  TESSERA_RETURN_IF_ERROR(check_window_options(options->window));
  if (options->batch_tokens == 0) {
    options->batch_tokens = std::max<int64_t>(kDefaultBatchTokens, options->window.max_tokens);
  }
  if (options->batch_tokens < options->window.max_tokens) {
    return invalid_option("batch_tokens", " = " + std::to_string(options->batch_tokens) +
                                              " is below the window of " +
                                              std::to_string(options->window.max_tokens) +
                                              " tokens: a full window must fit in one batch");
  }
  return Status::Ok();
}

Status run_pipeline(DocumentReader& reader, EmbeddingModel& model, const PipelineOptions& options,
                    EmbeddingWriter& writer, Context& ctx, const PipelineCallbacks& callbacks,
                    PipelineStats* stats) {
  return Runner(reader, model, options, writer, ctx, callbacks, stats).run();
}

}  // namespace tessera::pipeline
