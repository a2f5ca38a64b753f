// The document pipeline: documents -> token windows (chunks) -> length-sorted
// batches under a token budget -> embeddings -> rows written in input order.
// Documents are processed in rounds of bounded size (round_bytes of text), so
// memory stays bounded on any corpus and the output order never depends on
// the batching. A document is never split across rounds.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "pipeline/document.h"
#include "pipeline/document_reader.h"
#include "pipeline/embedding_model.h"
#include "pipeline/embedding_writer.h"
#include "pipeline/windowing.h"
#include "tessera/context.h"

namespace tessera::pipeline {

inline constexpr int kDefaultStride = 32;
// Encoder tokens per batch unless asked; raised to the window when that is
// longer (a long-context model's one sequence, --max-tokens 8192 and up).
inline constexpr int64_t kDefaultBatchTokens = 8192;

struct PipelineOptions {
  // max_tokens 0: the model's max_seq_length; stride < 0: kDefaultStride, or a
  // quarter of the window when that is smaller; specials: the model's frame's.
  WindowOptions window{0, -1};
  // Encoder tokens per batch, >= window.max_tokens; 0: kDefaultBatchTokens,
  // or window.max_tokens when that is larger.
  int64_t batch_tokens = 0;
  bool doc_embedding = false;  // one row per document: mean of its chunks
  // Prepended to every chunk ([CLS] prompt chunk [SEP]; pipeline/prompts.h
  // says which): tokenized alone, so it counts toward max_tokens.
  std::string prompt;
  // Rows the writer gets keep their first `dimensions` values, re-normalised
  // when the model normalises (a document's mean is of those rows); 0: all.
  int dimensions = 0;
  // Filled by resolve_options: the model's frame with the prompt's ids
  // after its prefix; every window is framed by it.
  model::SequenceFrame frame;
  // A round ends after this much text (~64k tokens: seconds of work, so the
  // documents count moves often) or this many documents.
  int64_t round_bytes = 256 << 10;
  int64_t round_documents = 1024;
};

struct BackendUse {
  int64_t calls = 0;
  int64_t ns = 0;
};

struct PipelineStats {
  int64_t items = 0;      // read from the reader: documents and reported input problems
  int64_t documents = 0;  // embedded and written
  int64_t skipped = 0;    // reported and skipped
  int64_t chunks = 0;
  int64_t tokens = 0;  // tokens the encoder ran, the specials included
  int64_t batches = 0;
  int64_t rows = 0;  // rows written
  int64_t elapsed_ns = 0;
  int64_t attention_ns = 0;
  std::map<std::string, BackendUse> attention;  // from the profiler's "attention" spans
  std::map<std::string, int64_t> stage_ns;      // every span, layers merged ("layer.qkv_gemm")
};

struct PipelineCallbacks {
  std::function<void(const Problem&)> on_problem;  // each skipped document, when found
  // After each batch: the totals so far and the reader's byte progress.
  std::function<void(const PipelineStats&, uint64_t bytes_read, uint64_t bytes_total)> on_progress;
  // After each round's rows are handed to the writer: every one of the
  // stats.items items read so far is written or reported, none is half done
  // (a document is never split across rounds), so this is where a checkpoint
  // can be taken. An error stops the run and is returned.
  std::function<Status(const PipelineStats&)> on_round_written;
};

// Checks the options against the model (window sizes, budget); the message
// names the flag and the values. Fills in max_tokens, stride and
// batch_tokens when unset, and window.specials from the model's frame.
Status resolve_options(const EmbeddingModel& model, PipelineOptions* options);

// A document's vector (--doc-embedding): the mean of its n chunk rows,
// re-normalized when the model's rows are (`renormalize`). n >= 1.
void mean_of_rows(const float* rows, int64_t n, int dim, bool renormalize, float* out);

// Runs every document of `reader` through `model` into `writer` (not finished
// here: the caller calls writer.finish() on success). Problems with single
// documents are counted in stats->skipped; the returned error is fatal (the
// model failed, the output cannot be written). Attention and stage times come
// from what ctx's profiler aggregated during the run (nothing is cleared).
Status run_pipeline(DocumentReader& reader, EmbeddingModel& model, const PipelineOptions& options,
                    EmbeddingWriter& writer, Context& ctx, const PipelineCallbacks& callbacks,
                    PipelineStats* stats);

}  // namespace tessera::pipeline
