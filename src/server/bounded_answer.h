// An answer body that can be large (/tokenize of a 2 MB text, /embed_all's
// token states), built piece by piece under two bounds: the per-request cap
// --max-response-bytes (413: this request can never be answered; ask for
// less) and the server's memory budget, reserved in steps as the text grows
// (503 + Retry-After: the memory is taken by other requests for now). The
// reservation travels with the Reply until the answer is sent.
#pragma once

#include <cstddef>
#include <string>

#include "server/api_error.h"
#include "tessera/allocator.h"

namespace tessera::server {

class BoundedAnswer {
 public:
  // `what` names the answer in messages ("the /tokenize answer").
  BoundedAnswer(TrackingAllocator& alloc, size_t cap, std::string what);

  std::string& text() { return text_; }
  // Call after appending (at least every few KiB): reserves what the text
  // holds and checks the cap. False once a bound is broken; error() says
  // which, and text() must not grow further.
  bool fits();
  const ApiError& error() const { return error_; }
  // The finished text and its reservation (to keep until it is sent).
  std::string take_text() { return std::move(text_); }
  Reservation take_reservation() { return std::move(memory_); }

 private:
  const size_t cap_;
  const std::string what_;
  std::string text_;
  Reservation memory_;
  ApiError error_;
};

}  // namespace tessera::server
