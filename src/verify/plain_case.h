// PlainCase: an AttentionCase as plain tensors for bench, tune and explain:
// N(0, 1) inputs (seed: the case's) rounded to its dtype, no guard bands, no
// logical copies; q, k, v, out in the layout's memory order without padding,
// lse and bias row-major (case_geometry.h, Packing::kDense). The conformance
// suite uses MaterializedCase (materialize.h) instead.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tessera/allocator.h"
#include "tessera/attention.h"
#include "verify/case.h"

namespace tessera::verify {

inline constexpr std::string_view kPlainOwner = "verify.plain";

class PlainCase {
 public:
  PlainCase() = default;
  // Bytes of the tensors create() allocates.
  static uint64_t bytes(const AttentionCase& c);
  // Fails (resource exhausted) before allocating when the tensors exceed the
  // machine's memory (runtime/size_limits.h).
  static Status create(const AttentionCase& c, TrackingAllocator& alloc, PlainCase* out);
  // The shapes only: every data pointer is a placeholder, for validate(),
  // check() and explain(), which read no data; cu_seqlens are real.
  static PlainCase placeholder(const AttentionCase& c);

  const AttentionArgs& args() const { return args_; }

 private:
  Buffer q_, k_, v_, out_, lse_, bias_;
  std::vector<int32_t> cu_q_, cu_k_;
  AttentionArgs args_;

  void set_args(const AttentionCase& c, void* q, void* k, void* v, void* out, void* lse,
                void* bias);
};

}  // namespace tessera::verify
