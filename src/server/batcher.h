// Dynamic batching. HTTP threads submit requests (lists of token sequences);
// one batcher thread packs queued sequences, first come first served, into
// batches under a token budget, runs each batch through the BatchEmbedder and
// writes every row back to the request it came from. Admission is bounded:
// past max_concurrent_requests a submit is refused at once (the route's 429).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "server/served_model.h"
#include "tessera/allocator.h"

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
  double embed_seconds = 0;
  double max_wait_seconds = 0;  // the oldest sequence's time in the queue
  bool ok = true;
};

// One admitted request: its rows, filled by the batcher.
class EmbedJob {
 public:
  // Blocks until every row is written (OK) or the request failed.
  Status wait() { return future_.get(); }
  float* rows() { return rows_.as<float>(); }
  int64_t count() const { return count_; }

 private:
  friend class Batcher;
  Buffer rows_;  // count x dim floats ("server.results")
  int64_t count_ = 0;
  int64_t remaining_ = 0;  // rows not yet written; batcher thread only
  bool done_ = false;      // answered (possibly with an error); batcher thread only
  std::promise<Status> promise_;
  std::future<Status> future_ = promise_.get_future();
};

class Batcher {
 public:
  using Observer = std::function<void(const BatchReport&)>;
  // Starts the batcher thread. Output rows come from `alloc`.
  Batcher(BatchEmbedder& embedder, TrackingAllocator& alloc, BatcherOptions options,
          Observer observer = {});
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;
  ~Batcher();  // shutdown()

  // Admits a request. Refusals: ResourceExhausted when max_concurrent_requests
  // are in flight, Unavailable once shutting down or when the memory budget
  // refuses the rows, InvalidArgument for an empty list or an empty sequence.
  Status submit(std::vector<std::vector<int32_t>> sequences, std::shared_ptr<EmbedJob>* job);

  // Refuses new requests, answers every admitted one, joins the thread.
  // Idempotent.
  void shutdown();

  const BatcherOptions& options() const { return options_; }
  size_t in_flight() const;  // admitted, not yet answered
  size_t queued() const;     // sequences waiting for a batch

 private:
  struct Item {
    std::shared_ptr<EmbedJob> job;
    int64_t row = 0;
    std::vector<int32_t> ids;
    int64_t enqueued_ns = 0;
  };
  void loop();
  std::vector<Item> take_batch();  // called with mu_ held
  void run_batch(std::vector<Item>& batch);
  void finish(EmbedJob& job, Status status);

  BatchEmbedder& embedder_;
  TrackingAllocator& alloc_;
  const BatcherOptions options_;
  Observer observer_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Item> queue_;
  size_t in_flight_ = 0;
  bool stopping_ = false;
  std::mutex join_mu_;  // shutdown() may race with the destructor: join once
  std::thread thread_;
};

}  // namespace tessera::server
