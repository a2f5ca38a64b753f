// What one request may spend besides the sizes checked before it starts
// (body, inputs, tokens per input): CPU time on its HTTP thread, where its
// texts are tokenized (--request-cpu-limit), and no more work once its
// client has gone or a stopping server's drain deadline (--drain-timeout)
// has passed. The HTTP layer opens one per request (RequestBudgetScope);
// the routes hand current_request_budget() to the tokenizer as its
// WorkLimit and ask it while they wait for the batcher.
#pragma once

#include <atomic>
#include <cstdint>

#include "model/tokenizers/work_limit.h"
#include "server/api_error.h"

namespace tessera::server {

class ConnectionStream;

struct RequestBounds {
  double cpu_seconds = 10;  // CPU time of the request's thread; <= 0: no bound
  // Steady-clock nanoseconds after which a stopping server's requests stop
  // (kNotStopping until stop()); null: never.
  const std::atomic<int64_t>* drain_deadline_ns = nullptr;
  static constexpr int64_t kNotStopping = INT64_MAX;
};

class RequestBudget final : public model::tokenizers::WorkLimit {
 public:
  // `client` (may be null) is polled for a hang-up at most every 50 ms.
  RequestBudget(const RequestBounds& bounds, ConnectionStream* client);

  // Whether waiting work should stop now: the client has gone or the drain
  // deadline has passed (the CPU bound is the tokenizer's; waiting for the
  // batcher costs this thread nothing). Records why, for refusal().
  bool should_stop();
  // The answer to a request this budget stopped (no_error() while it has
  // not): 413 naming --request-cpu-limit, or 503 for a stopping server (a
  // client that has gone reads nothing; it gets the 503 too).
  ApiError refusal() const;
  // CPU seconds this request's thread has used so far.
  double cpu_seconds_used() const;
  // Why it stopped, as a metrics label ("cpu_limit", "client_gone",
  // "drain_deadline"); null while it has not.
  const char* stop_label() const;

 protected:
  Status check() override;

 private:
  enum class Why { kNone, kCpu, kClientGone, kStopping };
  Why stop_reason();

  RequestBounds bounds_;
  ConnectionStream* client_;
  int64_t cpu_start_ns_;
  int64_t next_client_poll_ns_ = 0;
  Why why_ = Why::kNone;
};

// The budget of the request served on this thread, or null (tests calling
// routes directly, GET routes).
RequestBudget* current_request_budget();

// Makes `budget` this thread's current request budget for its lifetime.
class RequestBudgetScope {
 public:
  explicit RequestBudgetScope(RequestBudget* budget);
  ~RequestBudgetScope();
  RequestBudgetScope(const RequestBudgetScope&) = delete;
  RequestBudgetScope& operator=(const RequestBudgetScope&) = delete;
};

}  // namespace tessera::server
