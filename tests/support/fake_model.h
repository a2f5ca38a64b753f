// The one fake of pipeline::EmbeddingModel (the model seam of the pipeline,
// the server and the Embedder API), so the pipeline, the batching, limits
// and routes are tested without a model: whitespace-separated words are
// tokens (byte offsets exact), a row is a fixed function of the token ids
// and positions, so it can be checked against the sequence it claims to be.
// Each embed() records one "attention" span (backend "fake.attention",
// 1 ms) and one layer stage span, as the real encoder's dispatcher does. A
// gate can hold embed() to make queues build up; failures can be injected
// for the nth call, the next batch, every batch holding a given token, or
// every batch over a token count (a memory budget).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "model/wordpiece_decoder.h"
#include "pipeline/embedding_model.h"
#include "server/served_model.h"  // ModelInfo, for /info
#include "tessera/context.h"

namespace tessera::testing {

class FakeModel : public pipeline::EmbeddingModel {
 public:
  static constexpr int32_t kCls = 1;
  static constexpr int32_t kSep = 2;

  explicit FakeModel(int dim = 8, int max_length = 16, bool normalizes = true);

  // What /info reports for it.
  const server::ModelInfo& info() const { return info_; }
  // The context the server passes to embed() (unused by the fake).
  Context& context() { return ctx_; }
  int dim() const override { return info_.dim; }
  int max_seq_length() const override { return info_.max_length; }
  bool normalized() const override { return info_.normalizes; }
  // [CLS] text [SEP], as BERT, unless set_frame() gives another template
  // shape (a decoder's text [SEP], a bare text).
  const model::SequenceFrame& frame() const override { return frame_; }
  void set_frame(model::SequenceFrame frame) { frame_ = std::move(frame); }
  // config_sentence_transformers.json's prompts; none unless set.
  const model::Prompts& prompts() const override { return prompts_; }
  void set_prompts(model::Prompts prompts) { prompts_ = std::move(prompts); }
  // Words split on ASCII whitespace; a word "REFUSE" makes the text invalid, a word
  // "THROW" throws std::runtime_error (a bug in a handler).
  // Words split at ASCII spaces; `limit` is told each word's bytes.
  Status tokenize(std::string_view text, std::vector<model::TokenSpan>* out,
                  model::WorkLimit* limit = nullptr) const override;
  // The real WordPiece decoder over a small vocabulary: 0 [PAD], 1 [CLS],
  // 2 [SEP] (special), 3 "##s", 4 ".", and "w<id>" for the word ids; ids
  // outside it are unknown.
  Status decode(const std::vector<int64_t>& ids, bool skip_special_tokens, std::string* out,
                size_t* bad_position) const override;
  Status embed(const std::vector<std::vector<int32_t>>& sequences, Context& ctx,
               float* out) override;
  // Token i's state is the i-th term of expected_row's sum, so mean-pooling
  // them then normalizing gives the row embed() writes (a normalizing model).
  Status embed_tokens(const std::vector<std::vector<int32_t>>& sequences, Context& ctx,
                      float* out) override;

  // The row embed() writes for `ids` (normalized when the model normalizes).
  std::vector<float> expected_row(const std::vector<int32_t>& ids) const;
  // The states embed_tokens() writes for `ids`: ids.size() x dim floats.
  std::vector<float> expected_token_states(const std::vector<int32_t>& ids) const;
  // The same, written to out (dim floats).
  void embed_one(const std::vector<int32_t>& ids, float* out) const;
  // frame().prefix word ids frame().suffix of `text` ([CLS] ... [SEP]), cut
  // to max_length when `truncate`.
  std::vector<int32_t> ids_of(std::string_view text, bool truncate = false) const;

  // While closed, embed() waits (the batcher is busy; requests queue up).
  void close_gate();
  void open_gate();
  // Blocks until embed() has been entered `n` times in total.
  void wait_for_calls(size_t n);
  // embed() calls so far (failed ones included), the largest batch in
  // tokens, and the call (0-based) that fails with an internal error.
  int64_t calls() const;
  int64_t max_batch_tokens() const;
  void fail_on_call(size_t call);
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
  // Records the call, applies the injected faults; then writes pooled rows
  // or token states.
  Status run(const std::vector<std::vector<int32_t>>& sequences, Context& ctx, bool token_states,
             float* out);

  server::ModelInfo info_;
  model::SequenceFrame frame_{{kCls}, {kSep}};
  model::Prompts prompts_;
  model::WordPieceDecoder decoder_;
  Context ctx_{ContextOptions{.num_threads = 1}};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool gate_open_ = true;
  size_t calls_ = 0;
  std::optional<size_t> fail_on_call_;
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
  int64_t max_batch_tokens_ = 0;
};

}  // namespace tessera::testing
