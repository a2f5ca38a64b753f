// A caller's bound on one tokenization: a server request's share of CPU, a
// client that has gone, a stopping server. The tokenizer reports the bytes
// it has worked through between words; about every kCheckBytes the limit is
// asked whether to go on, so the check costs nothing next to the work and a
// runaway input is stopped within one word of its bound (one word costs at
// most O(n log n) in its length: bpe_model.cc). One per tokenizing thread.
#pragma once

#include <cstddef>

#include "tessera/status.h"

namespace tessera::model::tokenizers {

class WorkLimit {
 public:
  virtual ~WorkLimit() = default;
  // After `bytes` more of the text: OK to go on, else the status the
  // tokenization stops with.
  Status advance(size_t bytes) {
    pending_ += bytes;
    if (pending_ < kCheckBytes) return Status::Ok();
    return check_now();
  }
  // Asks at once (before a text, between texts).
  Status check_now() {
    pending_ = 0;
    Status s = check();
    if (!s.ok()) stopped_ = true;
    return s;
  }
  // Whether it has refused: a caller tells the limit's refusal from the
  // text's own fault by this, not by the status code.
  bool stopped() const { return stopped_; }

 protected:
  virtual Status check() = 0;

 private:
  static constexpr size_t kCheckBytes = 4096;
  size_t pending_ = 0;
  bool stopped_ = false;
};

// Reports `bytes` to `limit` when there is one.
inline Status advance(WorkLimit* limit, size_t bytes) {
  return limit == nullptr ? Status::Ok() : limit->advance(bytes);
}

}  // namespace tessera::model::tokenizers
