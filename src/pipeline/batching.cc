#include "pipeline/batching.h"

#include <algorithm>
#include <numeric>

namespace tessera::pipeline {

std::vector<Batch> plan_batches(const std::vector<int64_t>& lengths, int64_t token_budget) {
  std::vector<int64_t> order(lengths.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return lengths[a] > lengths[b]; });
  std::vector<Batch> batches;
  Batch current;
  for (int64_t i : order) {
    if (!current.chunks.empty() && current.tokens + lengths[i] > token_budget) {
      batches.push_back(std::move(current));
      current = Batch{};
    }
    current.chunks.push_back(i);
    current.tokens += lengths[i];
  }
  if (!current.chunks.empty()) batches.push_back(std::move(current));
  return batches;
}

}  // namespace tessera::pipeline
