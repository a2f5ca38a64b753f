// FakeModel: a deterministic EmbeddingModel for pipeline tests. Tokens are
// whitespace-separated words (id from a hash of the word, byte offsets exact);
// the embedding of a sequence is a fixed function of all its ids and
// positions, so a row can be checked against the chunk it claims to be.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <vector>

#include "pipeline/embedding_model.h"

namespace tessera::pipeline::testing {

class FakeModel : public EmbeddingModel {
 public:
  static constexpr int32_t kCls = 1;
  static constexpr int32_t kSep = 2;

  FakeModel(int dim, int max_seq_length) : dim_(dim), max_seq_length_(max_seq_length) {}

  int dim() const override { return dim_; }
  int max_seq_length() const override { return max_seq_length_; }
  bool normalized() const override { return true; }
  int32_t cls_id() const override { return kCls; }
  int32_t sep_id() const override { return kSep; }

  Status tokenize(std::string_view text, std::vector<model::TokenSpan>* out) const override {
    out->clear();
    size_t i = 0;
    while (i < text.size()) {
      while (i < text.size() && is_space(text[i])) ++i;
      const size_t begin = i;
      while (i < text.size() && !is_space(text[i])) ++i;
      if (i > begin) {
        out->push_back({word_id(text.substr(begin, i - begin)), static_cast<int64_t>(begin),
                        static_cast<int64_t>(i)});
      }
    }
    return Status::Ok();
  }

  // Records one "attention" span (backend "fake.attention", 1 ms) and one
  // layer stage span per call, as the real encoder's dispatcher does.
  Status embed(const std::vector<std::vector<int32_t>>& sequences, Context& ctx,
               float* out) override {
    if (fail_on_call_ >= 0 && calls_ == fail_on_call_) return internal_error("fake failure");
    ++calls_;
    Span attention;
    attention.name = "attention";
    attention.backend = "fake.attention";
    attention.duration_ns = 1000000;
    ctx.profiler().record(attention);
    Span stage;
    stage.name = "model.layer" + std::to_string(calls_ % 3) + ".qkv_gemm";
    stage.duration_ns = 2000000;
    ctx.profiler().record(stage);
    int64_t tokens = 0;
    for (size_t s = 0; s < sequences.size(); ++s) {
      if (sequences[s].size() > static_cast<size_t>(max_seq_length_)) {
        return invalid_argument("sequence too long");
      }
      tokens += static_cast<int64_t>(sequences[s].size());
      embed_one(sequences[s], out + s * dim_);
    }
    max_batch_tokens_ = std::max(max_batch_tokens_, tokens);
    return Status::Ok();
  }

  // The embedding a sequence must get, wherever it was batched.
  void embed_one(const std::vector<int32_t>& seq, float* out) const {
    double norm2 = 0;
    for (int j = 0; j < dim_; ++j) {
      double v = 0;
      for (size_t t = 0; t < seq.size(); ++t) v += std::sin(0.37 * seq[t] * (j + 1) + 0.11 * t);
      out[j] = static_cast<float>(v);
      norm2 += v * v;
    }
    const double inv = norm2 > 0 ? 1.0 / std::sqrt(norm2) : 0.0;
    for (int j = 0; j < dim_; ++j) out[j] = static_cast<float>(out[j] * inv);
  }

  static int32_t word_id(std::string_view w) {
    uint32_t h = 2166136261u;  // FNV-1a
    for (unsigned char c : w) h = (h ^ c) * 16777619u;
    return static_cast<int32_t>(10 + h % 1000);
  }

  int calls() const { return calls_; }
  int64_t max_batch_tokens() const { return max_batch_tokens_; }
  void fail_on_call(int call) { fail_on_call_ = call; }

 private:
  static bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

  int dim_;
  int max_seq_length_;
  int calls_ = 0;
  int fail_on_call_ = -1;
  int64_t max_batch_tokens_ = 0;
};

}  // namespace tessera::pipeline::testing
