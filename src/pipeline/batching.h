// Packing chunks into encoder batches: sorted by length (longest first, ties
// in input order) and filled greedily up to a token budget. The encoder runs
// packed variable-length batches, so a batch costs its real tokens only.
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::pipeline {

struct Batch {
  std::vector<int64_t> chunks;  // indices into the lengths given to plan_batches
  int64_t tokens = 0;           // sum of their lengths
};

// Every index appears in exactly one batch; a batch's tokens stay <= budget
// unless one chunk alone is longer (then it travels alone).
std::vector<Batch> plan_batches(const std::vector<int64_t>& lengths, int64_t token_budget);

}  // namespace tessera::pipeline
