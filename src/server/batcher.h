// Dynamic batching. HTTP threads submit requests (lists of token sequences);
// one batcher thread packs queued sequences into batches under a token
// budget, runs each batch through the model and writes every row back to the
// request it came from. Requests share a batch fairly: each waiting request
// of the batch's kind gets an equal share of its token budget first (at
// least one sequence), in arrival order, and what is left goes to them in
// arrival order; so a request of thousands of sequences (a 2 MB document)
// cannot hold a short one behind it for longer than one batch. Admission is bounded:
// past max_concurrent_requests a submit is refused at once (the route's 429).
// A failure is answered per request: when a merged batch fails, its halves
// are run again (recursively), so only the requests whose own sequences fail
// get the error and the others in the batch are answered normally.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "pipeline/embedding_model.h"
#include "tessera/allocator.h"
#include "tessera/context.h"

namespace tessera::server {

struct BatcherOptions {
  int64_t max_batch_tokens = 16384;    // tokens per batch (one sequence always fits)
  size_t max_batch_sequences = 0;      // 0: only the token budget; 1: batching off
  size_t max_concurrent_requests = 512;  // admitted and not yet answered
};

// What one batch did, for metrics.
struct BatchReport {
  size_t sequences = 0;
  int64_t tokens = 0;
  double embed_seconds = 0;     // every model run of the batch, retries included
  double max_wait_seconds = 0;  // the oldest sequence's time in the queue
  bool ok = true;               // the merged batch ran at the first attempt
  size_t model_runs = 0;        // 1, or more when a failed batch ran again in parts
  size_t embedded_sequences = 0;  // rows written (all of them when ok)
  int64_t embedded_tokens = 0;
};

// What a request's sequences are turned into. A batch holds one kind only.
enum class JobOutput {
  kPooled,       // one row per sequence (EmbeddingModel::embed)
  kTokenStates,  // one row per token of every sequence (EmbeddingModel::embed_tokens)
  kScores,       // one row of num_labels() logits per sequence (EmbeddingModel::classify)
  kSparse,       // one row of sparse_dim() SPLADE values per sequence (embed_sparse)
};

// Floats in one output row of `output` for `model`.
int64_t row_width(const pipeline::EmbeddingModel& model, JobOutput output);

// One admitted request: its rows, filled by the batcher.
class EmbedJob {
 public:
  // Blocks until every row is written (OK) or the request failed.
  Status wait() { return future_.get(); }
  // Waits up to `d`; true when the answer is in (then wait() returns it).
  bool ready_within(std::chrono::milliseconds d) {
    return future_.wait_for(d) == std::future_status::ready;
  }
  float* rows() { return rows_.as<float>(); }
  int64_t count() const { return count_; }  // sequences
  // Rows of width() floats in rows(): count(), or for token states the
  // sequences' total length (sequence 0's tokens first).
  int64_t output_rows() const { return output_rows_; }
  int64_t width() const { return width_; }
  // After a failed wait(): the sequence that failed when run alone, or -1
  // when the failure is not one sequence's (memory, or all of them failed).
  int64_t failed_row() const { return failed_row_; }

 private:
  friend class Batcher;
  Buffer rows_;  // output_rows x dim floats ("server.results")
  int64_t count_ = 0;
  int64_t output_rows_ = 0;
  int64_t width_ = 0;
  JobOutput output_ = JobOutput::kPooled;
  int64_t remaining_ = 0;  // rows not yet written; batcher thread only
  bool done_ = false;      // answered (possibly with an error); batcher thread only
  int64_t failed_row_ = -1;  // written before the promise is set
  std::atomic<bool> cancel_{false};  // Batcher::cancel: drop what is not yet run
  std::promise<Status> promise_;
  std::future<Status> future_ = promise_.get_future();
};

class Batcher {
 public:
  using Observer = std::function<void(const BatchReport&)>;
  // Starts the batcher thread, the only caller of model.embed(..., ctx, ...)
  // (a context's thread pool is not reentrant). Output rows come from
  // `alloc` (the server passes ctx's allocator; tests a budgeted one).
  Batcher(pipeline::EmbeddingModel& model, Context& ctx, TrackingAllocator& alloc,
          BatcherOptions options, Observer observer = {});
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;
  ~Batcher();  // shutdown()

  // Admits a request. Refusals: ResourceExhausted when max_concurrent_requests
  // are in flight, Unavailable once shutting down, InvalidArgument for an
  // empty list or an empty sequence. Running it may fail later, through
  // EmbedJob::wait(): the model's error for one of its own sequences, or
  // ResourceExhausted when the memory budget refuses its result rows or the
  // model's memory for a sequence of it (the route's 503 + Retry-After).
  // `type_ids` (kScores only; empty: all zeros) has the sequences' shape.
  Status submit(std::vector<std::vector<int32_t>> sequences, std::shared_ptr<EmbedJob>* job,
                JobOutput output = JobOutput::kPooled,
                std::vector<std::vector<int32_t>> type_ids = {});

  // The client of `job` has gone: its sequences not yet in a batch are
  // dropped and it is answered Cancelled (nobody reads it) before the next
  // batch. Any thread.
  void cancel(EmbedJob& job);

  // Refuses new requests, answers every admitted one, joins the thread.
  // Idempotent.
  void shutdown();

  const BatcherOptions& options() const { return options_; }
  size_t in_flight() const;  // admitted, not yet answered
  size_t queued() const;     // sequences waiting for a batch

 private:
  struct Item {
    std::shared_ptr<EmbedJob> job;
    int64_t row = 0;         // the sequence's index in its request
    int64_t output_row = 0;  // its first row in the job's rows
    std::vector<int32_t> ids;
    std::vector<int32_t> type_ids;  // kScores: the segment of each id; empty: all 0
    int64_t enqueued_ns = 0;
  };
  void loop();
  // The sequences of one admitted request that wait for a batch, in order.
  struct Pending {
    std::shared_ptr<EmbedJob> job;
    std::deque<Item> items;
  };
  // Called with mu_ held. Requests cancelled while waiting go to *cancelled,
  // to be answered once mu_ is released.
  std::vector<Item> take_batch(std::vector<std::shared_ptr<EmbedJob>>* cancelled);
  void run_batch(std::vector<Item>& batch);
  // Runs `part` as one model call; on failure runs each half again, down to
  // the requests (or, for a memory refusal, the sequences) that fail alone.
  void run_part(std::vector<Item> part, BatchReport* report);
  Status embed_part(std::vector<Item>& part, Buffer* out);
  // Rows of its job's width() floats that `item` gets back.
  static int64_t output_rows(const Item& item);
  void finish(EmbedJob& job, Status status);

  pipeline::EmbeddingModel& model_;
  Context& ctx_;
  TrackingAllocator& alloc_;
  const BatcherOptions options_;
  Observer observer_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Pending> pending_;  // requests with sequences waiting, oldest first
  size_t queued_ = 0;            // sequences in pending_
  size_t in_flight_ = 0;
  bool stopping_ = false;
  std::mutex join_mu_;  // shutdown() may race with the destructor: join once
  std::thread thread_;
};

}  // namespace tessera::server
