#include "server/batcher.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <string>

namespace tessera::server {

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr double kNsPerSecond = 1e9;

}  // namespace

int64_t row_width(const pipeline::EmbeddingModel& model, JobOutput output) {
  switch (output) {
    case JobOutput::kScores:
      return model.num_labels();
    case JobOutput::kSparse:
      return model.sparse_dim();
    case JobOutput::kTokenStates:
      return model.token_dim();
    case JobOutput::kPooled:
      break;
  }
  return model.dim();
}

Batcher::Batcher(pipeline::EmbeddingModel& model, Context& ctx, TrackingAllocator& alloc,
                 BatcherOptions options, Observer observer)
    : model_(model), ctx_(ctx), alloc_(alloc), options_(options), observer_(std::move(observer)) {
  thread_ = std::thread([this] { loop(); });
}

Batcher::~Batcher() { shutdown(); }

Status Batcher::submit(std::vector<std::vector<int32_t>> sequences, std::shared_ptr<EmbedJob>* job,
                       JobOutput output, std::vector<std::vector<int32_t>> type_ids) {
  if (sequences.empty()) return invalid_argument("a request needs at least one sequence");
  if (!type_ids.empty() && type_ids.size() != sequences.size()) {
    return invalid_argument("type ids for " + std::to_string(type_ids.size()) + " sequences, " +
                            std::to_string(sequences.size()) + " sequences");
  }
  for (size_t i = 0; i < sequences.size(); ++i) {
    if (sequences[i].empty()) {
      return invalid_argument("sequence " + std::to_string(i) + " is empty");
    }
  }
  auto j = std::make_shared<EmbedJob>();
  j->count_ = static_cast<int64_t>(sequences.size());
  j->remaining_ = j->count_;
  j->output_ = output;
  j->width_ = row_width(model_, output);
  if (j->width_ <= 0) {
    return invalid_argument("this model gives no rows of this kind (0 floats per row)");
  }
  std::vector<int64_t> output_row(sequences.size());
  for (size_t i = 0; i < sequences.size(); ++i) {
    output_row[i] = j->output_rows_;
    j->output_rows_ +=
        output == JobOutput::kTokenStates ? static_cast<int64_t>(sequences[i].size()) : 1;
  }
  const int64_t enqueued = now_ns();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return unavailable("the server is shutting down and takes no new requests");
    if (in_flight_ >= options_.max_concurrent_requests) {
      return resource_exhausted(std::to_string(in_flight_) +
                                " requests are in flight, the limit "
                                "(--max-concurrent-requests) is " +
                                std::to_string(options_.max_concurrent_requests) + "; retry later");
    }
    const size_t bytes =
        static_cast<size_t>(j->output_rows_) * static_cast<size_t>(j->width_) * sizeof(float);
    Status s = Buffer::allocate(alloc_, bytes, "server.results", &j->rows_);
    if (!s.ok()) {
      // Answered like a memory refusal while running (503, retry later), not
      // like a full queue: the request is fine, the memory is taken for now.
      j->done_ = true;
      j->promise_.set_value(resource_exhausted("no memory for the result rows: " + s.message()));
      *job = std::move(j);
      return Status::Ok();
    }
    ++in_flight_;
    Pending pending{j, {}};
    for (size_t i = 0; i < sequences.size(); ++i) {
      std::vector<int32_t> types =
          type_ids.empty() ? std::vector<int32_t>{} : std::move(type_ids[i]);
      pending.items.push_back({j, static_cast<int64_t>(i), output_row[i], std::move(sequences[i]),
                               std::move(types), enqueued});
    }
    queued_ += pending.items.size();
    pending_.push_back(std::move(pending));
  }
  wake_.notify_one();
  *job = std::move(j);
  return Status::Ok();
}

void Batcher::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_one();
  // Two callers (a signal and a destructor) may race here: join once.
  std::lock_guard<std::mutex> lock(join_mu_);
  if (thread_.joinable()) thread_.join();
}

size_t Batcher::in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_flight_;
}

size_t Batcher::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queued_;
}

void Batcher::loop() {
  for (;;) {
    std::vector<Item> batch;
    std::vector<std::shared_ptr<EmbedJob>> cancelled;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [this] { return !pending_.empty() || stopping_; });
      if (pending_.empty()) return;  // stopping, and everything admitted is answered
      batch = take_batch(&cancelled);
    }
    for (const auto& job : cancelled) {
      finish(*job, unavailable("cancelled: the client closed its connection"));
    }
    if (!batch.empty()) run_batch(batch);
  }
}

void Batcher::cancel(EmbedJob& job) {
  job.cancel_ = true;
  wake_.notify_one();
}

std::vector<Batcher::Item> Batcher::take_batch(std::vector<std::shared_ptr<EmbedJob>>* cancelled) {
  // A request that already failed is answered, and one whose client has gone
  // is to be answered Cancelled: drop what is left of either.
  std::erase_if(pending_, [&](const Pending& p) {
    if (!p.job->done_ && !p.job->cancel_) return false;
    if (!p.job->done_) cancelled->push_back(p.job);
    queued_ -= p.items.size();
    return true;
  });
  std::vector<Item> batch;
  if (pending_.empty()) return batch;
  // One model call gives one kind of output: the oldest request's kind.
  const JobOutput kind = pending_.front().job->output_;
  size_t sharing = 0;
  for (const Pending& p : pending_) sharing += p.job->output_ == kind ? 1 : 0;
  const int64_t share =
      std::max<int64_t>(1, options_.max_batch_tokens / static_cast<int64_t>(sharing));
  int64_t tokens = 0;
  bool full = false;
  // Takes p's next sequences while they fit the batch and `cap` tokens of p's
  // own; the batch's first sequence always fits.
  const auto take = [&](Pending& p, int64_t cap) {
    int64_t mine = 0;
    while (!p.items.empty() && !full) {
      const int64_t t = static_cast<int64_t>(p.items.front().ids.size());
      if (!batch.empty()) {
        if (tokens + t > options_.max_batch_tokens ||
            (options_.max_batch_sequences != 0 && batch.size() >= options_.max_batch_sequences)) {
          full = true;
          break;
        }
        if (mine > 0 && mine + t > cap) break;
      }
      mine += t;
      tokens += t;
      batch.push_back(std::move(p.items.front()));
      p.items.pop_front();
      --queued_;
    }
  };
  // First each request's share, then the rest of the budget in arrival order.
  for (const int64_t cap : {share, options_.max_batch_tokens}) {
    for (Pending& p : pending_) {
      if (full) break;
      if (p.job->output_ == kind) take(p, cap);
    }
  }
  std::erase_if(pending_, [](const Pending& p) { return p.items.empty(); });
  return batch;
}

void Batcher::run_batch(std::vector<Item>& batch) {
  BatchReport report;
  report.sequences = batch.size();
  const int64_t start = now_ns();
  for (const Item& item : batch) {
    report.tokens += static_cast<int64_t>(item.ids.size());
    report.max_wait_seconds =
        std::max(report.max_wait_seconds, (start - item.enqueued_ns) / kNsPerSecond);
  }
  run_part(std::move(batch), &report);
  report.embed_seconds = (now_ns() - start) / kNsPerSecond;
  if (observer_) observer_(report);
}

void Batcher::run_part(std::vector<Item> part, BatchReport* report) {
  // Sequences of a request that failed (earlier in this batch or before)
  // are not run: the request is answered already.
  std::erase_if(part, [](const Item& item) { return item.job->done_; });
  if (part.empty()) return;
  const bool first_run = report->model_runs++ == 0;

  Buffer out;
  const Status status = embed_part(part, &out);
  if (status.ok()) {
    const float* from = out.as<float>();
    for (size_t i = 0; i < part.size(); ++i) {
      EmbedJob& job = *part[i].job;
      const int64_t width = job.width_;
      const int64_t values = output_rows(part[i]) * width;
      std::memcpy(job.rows_.as<float>() + part[i].output_row * width, from,
                  static_cast<size_t>(values) * sizeof(float));
      from += values;
      ++report->embedded_sequences;
      report->embedded_tokens += static_cast<int64_t>(part[i].ids.size());
      if (--job.remaining_ == 0) finish(job, Status::Ok());
    }
    return;
  }
  if (first_run) report->ok = false;
  out.reset();  // the halves may need this memory
  // A request that ran alone is answered with the failure as it is: its
  // sequences share it and splitting would only repeat it. Once a merged
  // batch failed, every part is split down to the sequence at fault, also a
  // part that happens to hold one request only, so that the answer names the
  // same input whatever order the requests arrived in (bisection: a failure
  // shared by all costs log2(n) more runs, as the failed half is taken
  // first and the rest of its request is then dropped). A memory refusal is
  // always split: a smaller part needs less.
  const bool one_request = std::all_of(
      part.begin(), part.end(), [&](const Item& item) { return item.job == part.front().job; });
  const bool alone_from_the_start = first_run && one_request;
  const bool split =
      part.size() > 1 && (!alone_from_the_start || status.code() == StatusCode::kResourceExhausted);
  if (!split) {
    // A sequence that fails alone names the input at fault; a memory refusal
    // is the server's state, not the input's.
    if (part.size() == 1 && status.code() != StatusCode::kResourceExhausted) {
      part.front().job->failed_row_ = part.front().row;
    }
    for (Item& item : part) {
      if (!item.job->done_) finish(*item.job, status);
    }
    return;
  }
  const auto middle = part.begin() + static_cast<std::ptrdiff_t>(part.size() / 2);
  std::vector<Item> second(std::make_move_iterator(middle), std::make_move_iterator(part.end()));
  part.erase(middle, part.end());
  run_part(std::move(part), report);
  run_part(std::move(second), report);
}

int64_t Batcher::output_rows(const Item& item) {
  return item.job->output_ == JobOutput::kTokenStates ? static_cast<int64_t>(item.ids.size()) : 1;
}

Status Batcher::embed_part(std::vector<Item>& part, Buffer* out) {
  int64_t rows = 0;
  for (const Item& item : part) rows += output_rows(item);
  const JobOutput kind = part.front().job->output_;
  Status status = Buffer::allocate(
      alloc_,
      static_cast<size_t>(rows) * static_cast<size_t>(part.front().job->width_) * sizeof(float),
      "server.batch", out);
  if (!status.ok()) return status;
  // The model takes a list of sequences; lend it the items' ids and take
  // them back, since a failed part is run again in halves.
  std::vector<std::vector<int32_t>> sequences;
  std::vector<std::vector<int32_t>> type_ids;
  sequences.reserve(part.size());
  for (Item& item : part) {
    if (kind == JobOutput::kScores) {
      type_ids.push_back(item.type_ids.empty() ? std::vector<int32_t>(item.ids.size(), 0)
                                               : item.type_ids);
    }
    sequences.push_back(std::move(item.ids));
  }
  try {
    float* rows_out = out->as<float>();
    switch (kind) {
      case JobOutput::kPooled:
        status = model_.embed(sequences, ctx_, rows_out);
        break;
      case JobOutput::kTokenStates:
        status = model_.embed_tokens(sequences, ctx_, rows_out);
        break;
      case JobOutput::kScores:
        status = model_.classify(sequences, &type_ids, ctx_, rows_out);
        break;
      case JobOutput::kSparse:
        status = model_.embed_sparse(sequences, ctx_, rows_out);
        break;
    }
  } catch (const std::exception& e) {
    status = internal_error(std::string("the model threw: ") + e.what());
  } catch (...) {
    status = internal_error("the model threw a non-standard exception");
  }
  for (size_t i = 0; i < part.size(); ++i) part[i].ids = std::move(sequences[i]);
  return status;
}

void Batcher::finish(EmbedJob& job, Status status) {
  job.done_ = true;
  {
    // Leave the count before answering: a client that gets its answer and
    // sends the next request at once must find its slot free.
    std::lock_guard<std::mutex> lock(mu_);
    --in_flight_;
  }
  job.promise_.set_value(std::move(status));
}

}  // namespace tessera::server
