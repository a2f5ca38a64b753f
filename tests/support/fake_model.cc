#include "support/fake_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace tessera::testing {

namespace {

constexpr int32_t kFirstWordId = 100;
constexpr int64_t kAttentionSpanNs = 1000000;
constexpr int64_t kStageSpanNs = 2000000;

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }
constexpr uint32_t kWordIds = 1000;

int32_t word_id(std::string_view word) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (char c : word) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return kFirstWordId + static_cast<int32_t>(h % kWordIds);
}

}  // namespace

FakeModel::FakeModel(int dim, int max_length, bool normalizes) {
  info_.id = "fake-model";
  info_.dir = "/nonexistent/fake-model";
  info_.dim = dim;
  info_.max_length = max_length;
  info_.vocab_size = kFirstWordId + kWordIds;
  info_.normalizes = normalizes;
  info_.pooling = "mean";
  info_.weight_bytes = 0;
  decoder_.set_token(0, "[PAD]", /*special=*/true);
  decoder_.set_token(kCls, "[CLS]", /*special=*/true);
  decoder_.set_token(kSep, "[SEP]", /*special=*/true);
  decoder_.set_token(3, "##s", /*special=*/false);
  decoder_.set_token(4, ".", /*special=*/false);
  for (int32_t id = kFirstWordId; id < kFirstWordId + static_cast<int32_t>(kWordIds); ++id) {
    decoder_.set_token(id, "w" + std::to_string(id), /*special=*/false);
  }
}

Status FakeModel::decode(const std::vector<int64_t>& ids, bool skip_special_tokens,
                         std::string* out, size_t* bad_position) const {
  return decoder_.decode(ids, skip_special_tokens, out, bad_position);
}

Status FakeModel::tokenize(std::string_view text, std::vector<model::TokenSpan>* out,
                           model::WorkLimit* limit) const {
  out->clear();
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_space(text[i])) ++i;
    const size_t begin = i;
    while (i < text.size() && !is_space(text[i])) ++i;
    if (i == begin) break;
    const std::string_view word = text.substr(begin, i - begin);
    if (word == "REFUSE") {
      return invalid_argument("byte " + std::to_string(begin) + ": the word REFUSE is refused");
    }
    if (word == "THROW") throw std::runtime_error("the fake tokenizer throws on THROW");
    TESSERA_RETURN_IF_ERROR(model::tokenizers::advance(limit, i - begin));
    out->push_back({word_id(word), static_cast<int64_t>(begin), static_cast<int64_t>(i)});
  }
  return Status::Ok();
}

std::vector<float> FakeModel::expected_token_states(const std::vector<int32_t>& ids) const {
  std::vector<float> states(ids.size() * info_.dim);
  for (size_t t = 0; t < ids.size(); ++t) {
    for (int k = 0; k < info_.dim; ++k) {
      states[t * info_.dim + k] = std::sin(
          0.01f * static_cast<float>(ids[t]) * static_cast<float>(k + 1) + static_cast<float>(t));
    }
  }
  return states;
}

std::vector<float> FakeModel::expected_row(const std::vector<int32_t>& ids) const {
  const std::vector<float> states = expected_token_states(ids);
  std::vector<float> row(info_.dim, 0.0f);
  for (size_t t = 0; t < ids.size(); ++t) {
    for (int k = 0; k < info_.dim; ++k) row[k] += states[t * info_.dim + k];
  }
  if (info_.normalizes) {
    float sum = 0;
    for (float v : row) sum += v * v;
    const float inv = sum > 0 ? 1.0f / std::sqrt(sum) : 0.0f;
    for (float& v : row) v *= inv;
  }
  return row;
}

std::vector<int32_t> FakeModel::ids_of(std::string_view text, bool truncate) const {
  std::vector<model::TokenSpan> tokens;
  if (!tokenize(text, &tokens).ok()) return {};
  std::vector<int32_t> ids = frame_.prefix;
  for (const model::TokenSpan& t : tokens) {
    if (truncate && ids.size() + frame_.suffix.size() >= static_cast<size_t>(info_.max_length)) {
      break;
    }
    ids.push_back(t.id);
  }
  ids.insert(ids.end(), frame_.suffix.begin(), frame_.suffix.end());
  return ids;
}

void FakeModel::embed_one(const std::vector<int32_t>& ids, float* out) const {
  const std::vector<float> row = expected_row(ids);
  std::copy(row.begin(), row.end(), out);
}

Status FakeModel::embed(const std::vector<std::vector<int32_t>>& sequences, Context& ctx,
                        float* out) {
  return run(sequences, ctx, /*token_states=*/false, out);
}

Status FakeModel::embed_tokens(const std::vector<std::vector<int32_t>>& sequences, Context& ctx,
                               float* out) {
  return run(sequences, ctx, /*token_states=*/true, out);
}

Status FakeModel::run(const std::vector<std::vector<int32_t>>& sequences, Context& ctx,
                      bool token_states, float* out) {
  Span attention;
  attention.name = "attention";
  attention.backend = "fake.attention";
  attention.duration_ns = kAttentionSpanNs;
  ctx.profiler().record(attention);
  Status failure;
  bool throws = false;
  {
    std::unique_lock<std::mutex> lock(mu_);
    Span stage;
    stage.name = "model.layer" + std::to_string(calls_ % 3) + ".qkv_gemm";
    stage.stage = "layer.qkv_gemm";  // as model/stage_span.h's StageName sets it
    stage.duration_ns = kStageSpanNs;
    ctx.profiler().record(stage);
    if (fail_on_call_ && *fail_on_call_ == calls_) failure = internal_error("fake failure");
    ++calls_;
    cv_.notify_all();
    cv_.wait(lock, [this] { return gate_open_; });
    int64_t tokens = 0;
    for (const auto& s : sequences) tokens += static_cast<int64_t>(s.size());
    batch_sequences_.push_back(sequences.size());
    batch_tokens_.push_back(tokens);
    max_batch_tokens_ = std::max(max_batch_tokens_, tokens);
    for (const auto& s : sequences) {
      if (failure.ok() && s.empty()) failure = invalid_argument("an empty sequence");
      if (failure.ok() && s.size() > static_cast<size_t>(info_.max_length)) {
        failure = invalid_argument("sequence of " + std::to_string(s.size()) +
                                   " tokens is longer than max_length " +
                                   std::to_string(info_.max_length));
      }
    }
    if (failure.ok()) std::swap(failure, next_failure_);
    for (const TokenFault& f : token_faults_) {
      for (const auto& s : sequences) {
        if (failure.ok() && std::find(s.begin(), s.end(), f.token) != s.end()) {
          failure = f.status;
          throws = f.throws;
        }
      }
    }
    if (failure.ok() && token_limit_ && tokens > *token_limit_) {
      failure =
          resource_exhausted("memory budget: model.activations for " + std::to_string(tokens) +
                             " tokens (the fake's limit is " + std::to_string(*token_limit_) + ")");
    }
  }
  if (throws) throw std::runtime_error(failure.message());
  if (!failure.ok()) return failure;
  for (const std::vector<int32_t>& ids : sequences) {
    const std::vector<float> rows = token_states ? expected_token_states(ids) : expected_row(ids);
    out = std::copy(rows.begin(), rows.end(), out);
  }
  return Status::Ok();
}

int64_t FakeModel::calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(calls_);
}

int64_t FakeModel::max_batch_tokens() const {
  std::lock_guard<std::mutex> lock(mu_);
  return max_batch_tokens_;
}

void FakeModel::fail_on_call(size_t call) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_on_call_ = call;
}

void FakeModel::close_gate() {
  std::lock_guard<std::mutex> lock(mu_);
  gate_open_ = false;
}

void FakeModel::open_gate() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    gate_open_ = true;
  }
  cv_.notify_all();
}

void FakeModel::wait_for_calls(size_t n) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return calls_ >= n; });
}

void FakeModel::fail_next(Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  next_failure_ = std::move(status);
}

void FakeModel::fail_on_token(int32_t token, Status status, bool throws) {
  std::lock_guard<std::mutex> lock(mu_);
  token_faults_.push_back({token, std::move(status), throws});
}

void FakeModel::fail_over_tokens(int64_t tokens) {
  std::lock_guard<std::mutex> lock(mu_);
  token_limit_ = tokens;
}

std::vector<size_t> FakeModel::batch_sequences() const {
  std::lock_guard<std::mutex> lock(mu_);
  return batch_sequences_;
}

std::vector<int64_t> FakeModel::batch_tokens() const {
  std::lock_guard<std::mutex> lock(mu_);
  return batch_tokens_;
}

}  // namespace tessera::testing
