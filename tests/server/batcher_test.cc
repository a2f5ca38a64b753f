// The batcher against the fake model: own rows per request, packing under
// the token budget, batching off, admission limit, failures (answered per
// request within a merged batch), shutdown, memory.
#include "server/batcher.h"

#include <gtest/gtest.h>

#include <mutex>
#include <thread>

#include "support/fake_model.h"

namespace tessera::server {
namespace {

using tessera::testing::FakeModel;

// n sequences of `length` tokens each, ids distinct per (request, sequence).
std::vector<std::vector<int32_t>> sequences(int request, int n, int length) {
  std::vector<std::vector<int32_t>> out;
  for (int s = 0; s < n; ++s) {
    std::vector<int32_t> ids(length);
    for (int t = 0; t < length; ++t) ids[t] = 100 + request * 37 + s * 11 + t;
    out.push_back(std::move(ids));
  }
  return out;
}

void expect_rows(const FakeModel& model, EmbedJob& job,
                 const std::vector<std::vector<int32_t>>& seqs) {
  ASSERT_EQ(job.count(), static_cast<int64_t>(seqs.size()));
  for (size_t s = 0; s < seqs.size(); ++s) {
    const std::vector<float> want = model.expected_row(seqs[s]);
    for (int k = 0; k < model.dim(); ++k) {
      ASSERT_EQ(job.rows()[s * model.dim() + k], want[k]) << "row " << s << " column " << k;
    }
  }
}

TEST(Batcher, AnswersEveryRequestWithItsOwnRows) {
  FakeModel model;
  TrackingAllocator alloc;
  {
    Batcher batcher(model, model.context(), alloc, {.max_batch_tokens = 64});
    constexpr int kThreads = 4;
    constexpr int kRequestsPerThread = 25;
    std::vector<std::thread> threads;
    std::vector<std::string> failures(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int r = 0; r < kRequestsPerThread; ++r) {
          const int id = t * kRequestsPerThread + r;
          const auto seqs = sequences(id, 1 + id % 5, 2 + id % 7);
          std::shared_ptr<EmbedJob> job;
          Status s = batcher.submit(seqs, &job);
          if (s.ok()) s = job->wait();
          if (!s.ok()) {
            failures[t] = s.to_string();
            return;
          }
          for (size_t q = 0; q < seqs.size(); ++q) {
            const std::vector<float> want = model.expected_row(seqs[q]);
            for (int k = 0; k < model.dim(); ++k) {
              if (job->rows()[q * model.dim() + k] != want[k]) {
                failures[t] = "request " + std::to_string(id) + " row " + std::to_string(q);
                return;
              }
            }
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    for (const auto& f : failures) EXPECT_EQ(f, "");
    EXPECT_EQ(batcher.in_flight(), 0u);
  }
  EXPECT_TRUE(alloc.leaks().empty());
}

TEST(Batcher, PacksQueuedSequencesUnderTheTokenBudgetAndSplitsRequests) {
  FakeModel model;
  TrackingAllocator alloc;
  Batcher batcher(model, model.context(), alloc, {.max_batch_tokens = 10});
  model.close_gate();
  std::shared_ptr<EmbedJob> a, b, c;
  const auto sa = sequences(0, 1, 4), sb = sequences(1, 3, 4), sc = sequences(2, 2, 4);
  ASSERT_TRUE(batcher.submit(sa, &a).ok());
  model.wait_for_calls(1);  // a runs alone and is held at the gate
  ASSERT_TRUE(batcher.submit(sb, &b).ok());
  ASSERT_TRUE(batcher.submit(sc, &c).ok());
  EXPECT_EQ(batcher.queued(), 5u);
  model.open_gate();
  ASSERT_TRUE(a->wait().ok());
  ASSERT_TRUE(b->wait().ok());
  ASSERT_TRUE(c->wait().ok());
  // 4-token sequences under a 10-token budget: two per batch. b and c wait
  // together, so each gets half of a batch first: b0+c0, b1+c1, then b2.
  EXPECT_EQ(model.batch_sequences(), (std::vector<size_t>{1, 2, 2, 1}));
  EXPECT_EQ(model.batch_tokens(), (std::vector<int64_t>{4, 8, 8, 4}));
  expect_rows(model, *a, sa);
  expect_rows(model, *b, sb);
  expect_rows(model, *c, sc);
}

// Head-of-line blocking: a request of many sequences (a long document)
// queued before a short one must not hold it back for longer than a batch.
TEST(Batcher, AShortRequestIsNotQueuedBehindALongOne) {
  FakeModel model;
  TrackingAllocator alloc;
  Batcher batcher(model, model.context(), alloc, {.max_batch_tokens = 16});
  model.close_gate();
  std::shared_ptr<EmbedJob> a, big, small;
  const auto sa = sequences(0, 1, 4), sbig = sequences(1, 40, 4), ssmall = sequences(2, 1, 5);
  ASSERT_TRUE(batcher.submit(sa, &a).ok());
  model.wait_for_calls(1);  // a runs alone and is held at the gate
  ASSERT_TRUE(batcher.submit(sbig, &big).ok());
  ASSERT_TRUE(batcher.submit(ssmall, &small).ok());
  model.open_gate();
  ASSERT_TRUE(small->wait().ok());
  ASSERT_TRUE(big->wait().ok());
  expect_rows(model, *small, ssmall);
  expect_rows(model, *big, sbig);
  // First come first served would run small (the only 5-token sequence)
  // after all ten 16-token batches of big. Sharing gives each half of the
  // budget: the first batch after a is two of big's (8) and small's (5).
  const std::vector<int64_t> tokens = model.batch_tokens();
  ASSERT_GE(tokens.size(), 2u);
  EXPECT_EQ(tokens[0], 4);
  EXPECT_EQ(tokens[1], 8 + 5);
}

// Token states (/embed_all) and pooled rows are different model calls: a
// batch holds one kind, so a token request between two pooled ones splits
// them, and its rows are every token of every sequence, in order.
TEST(Batcher, TokenStateRequestsBatchApartFromPooledOnes) {
  FakeModel model;
  TrackingAllocator alloc;
  Batcher batcher(model, model.context(), alloc, {.max_batch_tokens = 100});
  model.close_gate();
  std::shared_ptr<EmbedJob> a, b, c, d;
  const auto sa = sequences(0, 1, 4), sb = sequences(1, 2, 3), sc = sequences(2, 2, 4),
             sd = sequences(3, 1, 5);
  ASSERT_TRUE(batcher.submit(sa, &a).ok());
  model.wait_for_calls(1);  // a runs alone and is held at the gate
  ASSERT_TRUE(batcher.submit(sb, &b, JobOutput::kTokenStates).ok());
  ASSERT_TRUE(batcher.submit(sd, &d, JobOutput::kTokenStates).ok());
  ASSERT_TRUE(batcher.submit(sc, &c).ok());
  model.open_gate();
  for (auto* job : {&a, &b, &c, &d}) ASSERT_TRUE((*job)->wait().ok());
  EXPECT_EQ(model.batch_sequences(), (std::vector<size_t>{1, 3, 2}));
  expect_rows(model, *a, sa);
  expect_rows(model, *c, sc);
  EXPECT_EQ(b->count(), 2);
  EXPECT_EQ(b->output_rows(), 6);
  EXPECT_EQ(d->output_rows(), 5);
  for (const auto& [job, seqs] : {std::pair{b.get(), sb}, std::pair{d.get(), sd}}) {
    std::vector<float> want;
    for (const auto& ids : seqs) {
      const std::vector<float> states = model.expected_token_states(ids);
      want.insert(want.end(), states.begin(), states.end());
    }
    ASSERT_EQ(static_cast<int64_t>(want.size()), job->output_rows() * model.dim());
    for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(job->rows()[i], want[i]) << i;
  }
}

TEST(Batcher, OneSequencePerBatchWhenBatchingIsOff) {
  FakeModel model;
  TrackingAllocator alloc;
  Batcher batcher(model, model.context(), alloc, {.max_batch_tokens = 1000, .max_batch_sequences = 1});
  model.close_gate();
  std::shared_ptr<EmbedJob> a, b;
  ASSERT_TRUE(batcher.submit(sequences(0, 1, 3), &a).ok());
  model.wait_for_calls(1);
  const auto sb = sequences(1, 3, 3);
  ASSERT_TRUE(batcher.submit(sb, &b).ok());
  model.open_gate();
  ASSERT_TRUE(a->wait().ok());
  ASSERT_TRUE(b->wait().ok());
  EXPECT_EQ(model.batch_sequences(), (std::vector<size_t>{1, 1, 1, 1}));
  expect_rows(model, *b, sb);
}

TEST(Batcher, RefusesPastMaxConcurrentRequestsAndAdmitsAgainAfterAnswers) {
  FakeModel model;
  TrackingAllocator alloc;
  Batcher batcher(model, model.context(), alloc, {.max_batch_tokens = 100, .max_concurrent_requests = 2});
  model.close_gate();
  std::shared_ptr<EmbedJob> a, b, c;
  ASSERT_TRUE(batcher.submit(sequences(0, 1, 3), &a).ok());
  ASSERT_TRUE(batcher.submit(sequences(1, 1, 3), &b).ok());
  const Status refused = batcher.submit(sequences(2, 1, 3), &c);
  EXPECT_EQ(refused.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(refused.message().find("--max-concurrent-requests"), std::string::npos)
      << refused.message();
  EXPECT_EQ(c, nullptr);
  model.open_gate();
  ASSERT_TRUE(a->wait().ok());
  ASSERT_TRUE(b->wait().ok());
  EXPECT_EQ(batcher.in_flight(), 0u);
  ASSERT_TRUE(batcher.submit(sequences(2, 1, 3), &c).ok());
  EXPECT_TRUE(c->wait().ok());
}

TEST(Batcher, AFailedBatchFailsItsRequestsAndTheNextBatchRuns) {
  FakeModel model;
  TrackingAllocator alloc;
  Batcher batcher(model, model.context(), alloc, {.max_batch_tokens = 4});
  model.close_gate();
  std::shared_ptr<EmbedJob> a, b;
  ASSERT_TRUE(batcher.submit(sequences(0, 3, 4), &a).ok());  // three batches of one
  model.wait_for_calls(1);
  const auto sb = sequences(1, 1, 4);
  ASSERT_TRUE(batcher.submit(sb, &b).ok());
  model.fail_next(unavailable("no attention backend can run these args"));
  model.open_gate();
  const Status sa = a->wait();
  EXPECT_EQ(sa.code(), StatusCode::kUnavailable);
  EXPECT_NE(sa.message().find("no attention backend"), std::string::npos);
  ASSERT_TRUE(b->wait().ok());
  expect_rows(model, *b, sb);
  // a's other two sequences were dropped, not run: batches a0, b0.
  EXPECT_EQ(model.batch_sequences(), (std::vector<size_t>{1, 1}));
  EXPECT_EQ(batcher.in_flight(), 0u);
}

// A token no request of sequences() holds (their ids start at 100).
constexpr int32_t kPoison = 99;

// Requests b, c, d queue behind a held batch and so run as one merged batch;
// c's second sequence holds the poison token. In the default order c's
// sequences straddle the first split; with c first, the first split isolates
// c as a part of its own (the order the server's arrival race can produce).
struct MergedBatch {
  std::shared_ptr<EmbedJob> b, c, d;
  std::vector<std::vector<int32_t>> sb = sequences(1, 2, 3), sc = sequences(2, 3, 3),
                                    sd = sequences(3, 1, 3);
  MergedBatch(FakeModel& model, Batcher& batcher, bool c_first = false) {
    model.close_gate();
    std::shared_ptr<EmbedJob> a;
    EXPECT_TRUE(batcher.submit(sequences(0, 1, 3), &a).ok());
    model.wait_for_calls(1);
    sc[1][1] = kPoison;
    if (c_first) {
      EXPECT_TRUE(batcher.submit(sc, &c).ok());
    }
    EXPECT_TRUE(batcher.submit(sb, &b).ok());
    if (!c_first) {
      EXPECT_TRUE(batcher.submit(sc, &c).ok());
    }
    EXPECT_TRUE(batcher.submit(sd, &d).ok());
    model.open_gate();
    EXPECT_TRUE(a->wait().ok());
  }
};

TEST(Batcher, AFailingSequenceFailsOnlyItsRequestAndTheRestOfTheBatchIsAnswered) {
  FakeModel model;
  TrackingAllocator alloc;
  std::vector<BatchReport> reports;
  std::mutex reports_mu;
  Batcher batcher(model, model.context(), alloc, {.max_batch_tokens = 100}, [&](const BatchReport& r) {
    std::lock_guard<std::mutex> lock(reports_mu);
    reports.push_back(r);
  });
  model.fail_on_token(kPoison, internal_error("cpu.flash failed: injected fault"));
  MergedBatch m(model, batcher);
  ASSERT_TRUE(m.b->wait().ok());
  const Status sc = m.c->wait();
  ASSERT_TRUE(m.d->wait().ok());
  expect_rows(model, *m.b, m.sb);
  expect_rows(model, *m.d, m.sd);
  EXPECT_EQ(sc.code(), StatusCode::kInternal) << sc.to_string();
  EXPECT_NE(sc.message().find("injected fault"), std::string::npos) << sc.message();
  EXPECT_EQ(m.c->failed_row(), 1);
  // The six sequences of b, c, d did run as one batch first (so the failure
  // really was inside a merged batch), then in parts.
  const std::vector<size_t> runs = model.batch_sequences();
  ASSERT_GE(runs.size(), 3u);
  EXPECT_EQ(runs[1], 6u);
  batcher.shutdown();
  std::lock_guard<std::mutex> lock(reports_mu);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_FALSE(reports[1].ok);
  EXPECT_EQ(reports[1].model_runs, runs.size() - 1);
  // b's two, d's one, and c's first (run in the half before c failed).
  EXPECT_EQ(reports[1].embedded_sequences, 4u);
  EXPECT_EQ(batcher.in_flight(), 0u);
  m.b.reset();
  m.c.reset();
  m.d.reset();
  EXPECT_TRUE(alloc.leaks().empty());
}

// CI once saw the server's version of this fail: the arrival order put the
// poisoned request in a part of its own, which was then not split, so the
// answer named no input. Within a failed merged batch every part is split
// down to the failing sequence, whatever the order.
TEST(Batcher, AFailingRequestIsolatedByTheSplitStillNamesItsSequence) {
  FakeModel model;
  TrackingAllocator alloc;
  Batcher batcher(model, model.context(), alloc, {.max_batch_tokens = 100});
  model.fail_on_token(kPoison, internal_error("cpu.flash failed: injected fault"));
  MergedBatch m(model, batcher, /*c_first=*/true);
  const Status sc = m.c->wait();
  ASSERT_TRUE(m.b->wait().ok());
  ASSERT_TRUE(m.d->wait().ok());
  expect_rows(model, *m.b, m.sb);
  expect_rows(model, *m.d, m.sd);
  EXPECT_EQ(sc.code(), StatusCode::kInternal) << sc.to_string();
  EXPECT_EQ(m.c->failed_row(), 1);
  // a; then c0 c1 c2 b0 b1 d0 merged; c's part of three; c0 (fine); c1 c2
  // (fails); c1 alone (fails, c is answered, c2 dropped); b0 b1 d0.
  EXPECT_EQ(model.batch_sequences(), (std::vector<size_t>{1, 6, 3, 1, 2, 1, 3}));
}

TEST(Batcher, AModelThatThrowsOnOneSequenceFailsOnlyItsRequest) {
  FakeModel model;
  TrackingAllocator alloc;
  Batcher batcher(model, model.context(), alloc, {.max_batch_tokens = 100});
  model.fail_on_token(kPoison, internal_error("std::bad_alloc in a kernel"), /*throws=*/true);
  MergedBatch m(model, batcher);
  ASSERT_TRUE(m.b->wait().ok());
  ASSERT_TRUE(m.d->wait().ok());
  const Status sc = m.c->wait();
  EXPECT_EQ(sc.code(), StatusCode::kInternal);
  EXPECT_NE(sc.message().find("the model threw: std::bad_alloc in a kernel"), std::string::npos)
      << sc.message();
  expect_rows(model, *m.d, m.sd);
}

TEST(Batcher, AFailureOfOneRequestAloneIsNotRetried) {
  FakeModel model;
  TrackingAllocator alloc;
  Batcher batcher(model, model.context(), alloc, {.max_batch_tokens = 100});
  model.fail_next(unavailable("no attention backend can run these args"));
  std::shared_ptr<EmbedJob> a;
  ASSERT_TRUE(batcher.submit(sequences(0, 4, 3), &a).ok());
  const Status s = a->wait();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(a->failed_row(), -1);  // not one sequence's fault
  // Its four sequences share the failure: splitting would only repeat it.
  EXPECT_EQ(model.batch_sequences(), (std::vector<size_t>{4}));
}

TEST(Batcher, AMemoryRefusalRunsTheBatchInSmallerPartsThatFit) {
  FakeModel model;
  TrackingAllocator alloc;
  Batcher batcher(model, model.context(), alloc, {.max_batch_tokens = 100});
  model.fail_over_tokens(8);  // the "activations" of more than 8 tokens do not fit
  model.close_gate();
  std::shared_ptr<EmbedJob> a, b, c, big;
  ASSERT_TRUE(batcher.submit(sequences(0, 1, 2), &a).ok());
  model.wait_for_calls(1);
  const auto sb = sequences(1, 3, 4);  // one request of 12 tokens: split too
  const auto sc = sequences(2, 1, 4);
  ASSERT_TRUE(batcher.submit(sb, &b).ok());
  ASSERT_TRUE(batcher.submit(sc, &c).ok());
  ASSERT_TRUE(batcher.submit(sequences(3, 1, 9), &big).ok());  // never fits
  model.open_gate();
  ASSERT_TRUE(a->wait().ok());
  ASSERT_TRUE(b->wait().ok());
  ASSERT_TRUE(c->wait().ok());
  expect_rows(model, *b, sb);
  expect_rows(model, *c, sc);
  const Status s = big->wait();
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.to_string();
  EXPECT_EQ(big->failed_row(), -1);
  // b, c and big ran merged first (25 tokens), then in halves:
  // [b0 b1] | [b2 c0 big] -> [b2] | [c0 big] -> [c0] | [big].
  EXPECT_EQ(model.batch_tokens(), (std::vector<int64_t>{2, 25, 8, 17, 4, 13, 4, 9}));
}

TEST(Batcher, ShutdownAnswersEverythingAdmittedAndRefusesTheRest) {
  FakeModel model;
  TrackingAllocator alloc;
  Batcher batcher(model, model.context(), alloc, {.max_batch_tokens = 8, .max_concurrent_requests = 1 << 20});
  model.close_gate();
  std::vector<std::shared_ptr<EmbedJob>> jobs(6);
  std::vector<std::vector<std::vector<int32_t>>> seqs;
  for (int r = 0; r < 6; ++r) {
    seqs.push_back(sequences(r, 2, 3));
    ASSERT_TRUE(batcher.submit(seqs.back(), &jobs[r]).ok());
  }
  model.wait_for_calls(1);
  std::thread stopper([&] { batcher.shutdown(); });
  // shutdown() refuses new work before it waits for the queue to drain;
  // what got in before that is answered like the rest.
  std::vector<std::shared_ptr<EmbedJob>> early;
  Status s;
  for (;;) {
    std::shared_ptr<EmbedJob> late;
    s = batcher.submit(sequences(9, 1, 3), &late);
    if (!s.ok()) break;
    early.push_back(std::move(late));
    std::this_thread::yield();
  }
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  model.open_gate();
  stopper.join();
  for (int r = 0; r < 6; ++r) {
    ASSERT_TRUE(jobs[r]->wait().ok()) << r;
    expect_rows(model, *jobs[r], seqs[r]);
  }
  for (auto& job : early) EXPECT_TRUE(job->wait().ok());
}

TEST(Batcher, RefusesEmptyRequestsAndSequences) {
  FakeModel model;
  TrackingAllocator alloc;
  Batcher batcher(model, model.context(), alloc, {});
  std::shared_ptr<EmbedJob> job;
  EXPECT_EQ(batcher.submit({}, &job).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(batcher.submit({{1, 2}, {}}, &job).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(batcher.in_flight(), 0u);
}

TEST(Batcher, ResultRowsComeFromTheTrackedAllocatorAndRespectItsBudget) {
  FakeModel model(/*dim=*/8);
  TrackingAllocator alloc(/*budget=*/2048);
  Batcher batcher(model, model.context(), alloc, {});
  model.close_gate();
  std::shared_ptr<EmbedJob> a, b;
  ASSERT_TRUE(batcher.submit(sequences(0, 16, 2), &a).ok());  // 16 x 8 floats: 512 bytes
  model.wait_for_calls(1);  // its batch output (512 bytes more) is allocated
  EXPECT_EQ(alloc.by_owner().at("server.results").live_bytes, 512u);
  EXPECT_EQ(alloc.by_owner().at("server.batch").live_bytes, 512u);
  // 1056 > 2048 - 1024: admitted, and answered at once with the memory
  // refusal (the route's 503), never queued.
  ASSERT_TRUE(batcher.submit(sequences(1, 33, 2), &b).ok());
  const Status refused = b->wait();
  EXPECT_EQ(refused.code(), StatusCode::kResourceExhausted) << refused.to_string();
  EXPECT_NE(refused.message().find("result rows"), std::string::npos) << refused.message();
  EXPECT_EQ(batcher.in_flight(), 1u);
  EXPECT_EQ(batcher.queued(), 0u);
  model.open_gate();
  ASSERT_TRUE(a->wait().ok());
  a.reset();
  batcher.shutdown();
  EXPECT_TRUE(alloc.leaks().empty());
}

// Token states take a row per token from the same budget: a request the
// pooled path would hold in 2 rows is refused when its tokens' rows do not fit.
TEST(Batcher, TokenStateRowsArePerTokenAndRespectTheBudget) {
  FakeModel model(/*dim=*/8);
  TrackingAllocator alloc(/*budget=*/2048);
  Batcher batcher(model, model.context(), alloc, {});
  model.close_gate();
  std::shared_ptr<EmbedJob> a, b;
  ASSERT_TRUE(batcher.submit(sequences(0, 2, 8), &a, JobOutput::kTokenStates).ok());
  model.wait_for_calls(1);  // 16 token rows x 8 floats: 512 bytes, twice (batch output)
  EXPECT_EQ(alloc.by_owner().at("server.results").live_bytes, 512u);
  EXPECT_EQ(alloc.by_owner().at("server.batch").live_bytes, 512u);
  // 2 x 17 tokens: 1088 bytes > 2048 - 1024, refused (the route's 503).
  ASSERT_TRUE(batcher.submit(sequences(1, 2, 17), &b, JobOutput::kTokenStates).ok());
  EXPECT_EQ(b->wait().code(), StatusCode::kResourceExhausted);
  model.open_gate();
  ASSERT_TRUE(a->wait().ok());
  EXPECT_EQ(a->output_rows(), 16);
  a.reset();
  batcher.shutdown();
  EXPECT_TRUE(alloc.leaks().empty());
}

}  // namespace
}  // namespace tessera::server
