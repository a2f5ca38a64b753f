// A deterministic stand-in for the encoder, so the batching, limits and
// routes are tested without a model: words are tokens, a row is a fixed
// function of the token ids. A gate can hold embed() to make queues build up;
// failures can be injected for the next batch, for every batch holding a
// given token, or for every batch over a token count (a memory budget).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "server/served_model.h"

namespace tessera::server::testing {

class FakeModel : public ServedModel {
 public:
  static constexpr int32_t kCls = 1;
  static constexpr int32_t kSep = 2;

  explicit FakeModel(int dim = 8, int max_length = 16, bool normalizes = true);

  const ModelInfo& info() const override { return info_; }
  int dim() const override { return info_.dim; }
  // Space-separated words; a word "REFUSE" makes the text invalid, a word
  // "THROW" throws std::runtime_error (a bug in a handler).
  Status tokenize(std::string_view text, std::vector<TextToken>* out) const override;
  int32_t cls_id() const override { return kCls; }
  int32_t sep_id() const override { return kSep; }
  std::string special_text(int32_t id) const override;
  Status embed(const std::vector<std::vector<int32_t>>& sequences, float* out) override;

  // The row embed() writes for `ids` (normalized when the model normalizes).
  std::vector<float> expected_row(const std::vector<int32_t>& ids) const;
  // [CLS] word ids [SEP] of `text`, cut to max_length when `truncate`.
  std::vector<int32_t> ids_of(std::string_view text, bool truncate = false) const;

  // While closed, embed() waits (the batcher is busy; requests queue up).
  void close_gate();
  void open_gate();
  // Blocks until embed() has been entered `n` times in total.
  void wait_for_calls(size_t n);
  // The next batch fails with `status`.
  void fail_next(Status status);
  // Every batch holding `token` fails with `status` (throws std::runtime_error
  // with its message when `throws`), whatever else it holds.
  void fail_on_token(int32_t token, Status status, bool throws = false);
  // Every batch of more than `tokens` tokens fails with ResourceExhausted,
  // as the encoder does when the memory budget refuses its activations.
  void fail_over_tokens(int64_t tokens);
  // Sequences and tokens of every batch so far.
  std::vector<size_t> batch_sequences() const;
  std::vector<int64_t> batch_tokens() const;

 private:
  ModelInfo info_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool gate_open_ = true;
  size_t calls_ = 0;
  Status next_failure_;
  struct TokenFault {
    int32_t token;
    Status status;
    bool throws;
  };
  std::vector<TokenFault> token_faults_;
  std::optional<int64_t> token_limit_;
  std::vector<size_t> batch_sequences_;
  std::vector<int64_t> batch_tokens_;
};

}  // namespace tessera::server::testing
