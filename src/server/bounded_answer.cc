#include "server/bounded_answer.h"

#include <algorithm>

namespace tessera::server {

namespace {
// Reservations grow by at least this much, so a growing answer takes the
// allocator's lock once per MiB, not once per token.
constexpr size_t kReserveStep = 1 << 20;
}  // namespace

BoundedAnswer::BoundedAnswer(TrackingAllocator& alloc, size_t cap, std::string what)
    : cap_(cap), what_(std::move(what)), memory_(alloc, "server.answers") {}

bool BoundedAnswer::fits() {
  if (!error_.ok()) return false;
  if (text_.size() > cap_) {
    error_ =
        too_large_error("", what_ + " would exceed --max-response-bytes = " + std::to_string(cap_) +
                                " bytes; ask for fewer inputs or shorter texts");
    text_ = std::string();  // give the memory back now
    return false;
  }
  // What the string holds, not what it uses: its capacity is the memory.
  const size_t held = std::max(text_.capacity(), text_.size());
  if (held <= memory_.bytes()) return true;
  const size_t more = std::max(held - memory_.bytes(), kReserveStep);
  if (memory_.grow(more).ok()) return true;
  error_ = {503, "Overloaded", "",
            what_ + " does not fit the memory budget now (--memory-budget); retry later"};
  error_.retry_after_seconds = 1;
  text_ = std::string();
  return false;
}

}  // namespace tessera::server
