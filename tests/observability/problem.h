// A small f32 attention problem with N(0, 1) inputs, owned by vectors.
#pragma once

#include <random>
#include <vector>

#include "tessera/attention.h"
#include "tessera/context.h"

namespace tessera::testing {

struct SmallProblem {
  std::vector<float> q, k, v, out;
  AttentionArgs args;
  explicit SmallProblem(int64_t s = 9, int64_t h = 2, int64_t d = 8, unsigned seed = 7)
      : q(s * h * d), k(s * h * d), v(s * h * d), out(s * h * d, 0.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> n;
    for (auto* buf : {&q, &k, &v}) {
      for (float& x : *buf) x = n(rng);
    }
    args.q = TensorView::contiguous(q.data(), DType::kF32, {1, s, h, d});
    args.k = TensorView::contiguous(k.data(), DType::kF32, {1, s, h, d});
    args.v = TensorView::contiguous(v.data(), DType::kF32, {1, s, h, d});
    args.out = TensorView::contiguous(out.data(), DType::kF32, {1, s, h, d});
  }
};


}  // namespace tessera::testing
