#include "server/request_budget.h"

#include <time.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "server/connection_stream.h"

namespace tessera::server {

namespace {

thread_local RequestBudget* tls_budget = nullptr;

int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A hang-up costs a poll() to see: ask at most this often.
constexpr int64_t kClientPollNs = 50'000'000;

std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", s);
  return text;
}

}  // namespace

RequestBudget::RequestBudget(const RequestBounds& bounds, ConnectionStream* client)
    : bounds_(bounds), client_(client), cpu_start_ns_(thread_cpu_ns()) {}

double RequestBudget::cpu_seconds_used() const {
  return static_cast<double>(thread_cpu_ns() - cpu_start_ns_) * 1e-9;
}

RequestBudget::Why RequestBudget::stop_reason() {
  const int64_t now = steady_ns();
  if (bounds_.drain_deadline_ns != nullptr &&
      now >= bounds_.drain_deadline_ns->load(std::memory_order_relaxed)) {
    return Why::kStopping;
  }
  if (client_ != nullptr && now >= next_client_poll_ns_) {
    next_client_poll_ns_ = now + kClientPollNs;
    if (client_->peer_gone()) return Why::kClientGone;
  }
  return Why::kNone;
}

bool RequestBudget::should_stop() {
  if (why_ == Why::kNone) why_ = stop_reason();
  return why_ != Why::kNone;
}

Status RequestBudget::check() {
  if (why_ == Why::kNone && bounds_.cpu_seconds > 0 && cpu_seconds_used() > bounds_.cpu_seconds) {
    why_ = Why::kCpu;
  }
  if (!should_stop()) return Status::Ok();
  return Status(StatusCode::kResourceExhausted, refusal().message);
}

ApiError RequestBudget::refusal() const {
  switch (why_) {
    case Why::kNone:
      return no_error();
    case Why::kCpu:
      return too_large_error(
          "", "this request took more than " + seconds_text(bounds_.cpu_seconds) +
                  " s of CPU to tokenize (--request-cpu-limit) and was stopped; send shorter "
                  "inputs or fewer of them, or start the server with a higher "
                  "--request-cpu-limit");
    case Why::kClientGone:
      return {503, "Unhealthy", "", "the client closed the connection; the request was stopped"};
    case Why::kStopping:
      return {503, "Unhealthy", "",
              "the server is stopping and its drain deadline (--drain-timeout) has passed; "
              "the request was stopped: retry on another replica"};
  }
  return no_error();
}

const char* RequestBudget::stop_label() const {
  switch (why_) {
    case Why::kNone:
      return nullptr;
    case Why::kCpu:
      return "cpu_limit";
    case Why::kClientGone:
      return "client_gone";
    case Why::kStopping:
      return "drain_deadline";
  }
  return nullptr;
}

RequestBudget* current_request_budget() { return tls_budget; }

RequestBudgetScope::RequestBudgetScope(RequestBudget* budget) { tls_budget = budget; }
RequestBudgetScope::~RequestBudgetScope() { tls_budget = nullptr; }

}  // namespace tessera::server
