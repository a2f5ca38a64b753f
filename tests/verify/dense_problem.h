// A small dense f32 problem for tests that write their inputs by hand:
// q [B, Sq, Hq, D], k [B, Sk, Hkv, D], v [B, Sk, Hkv, Dv], out, lse [B, Hq, Sq].
#pragma once

#include <vector>

#include "tessera/attention.h"

namespace tessera::verify::testing {

struct DenseProblem {
  int64_t b, sq, sk, hq, hkv, d, dv;
  std::vector<float> q, k, v, out, lse;
  AttentionArgs args;

  DenseProblem(int64_t b_, int64_t sq_, int64_t sk_, int64_t hq_, int64_t hkv_, int64_t d_,
               int64_t dv_)
      : b(b_),
        sq(sq_),
        sk(sk_),
        hq(hq_),
        hkv(hkv_),
        d(d_),
        dv(dv_),
        q(b * sq * hq * d),
        k(b * sk * hkv * d),
        v(b * sk * hkv * dv),
        out(b * sq * hq * dv, -7.0f),
        lse(b * hq * sq, -7.0f) {
    args.q = TensorView::contiguous(q.data(), DType::kF32, {b, sq, hq, d});
    args.k = TensorView::contiguous(k.data(), DType::kF32, {b, sk, hkv, d});
    args.v = TensorView::contiguous(v.data(), DType::kF32, {b, sk, hkv, dv});
    args.out = TensorView::contiguous(out.data(), DType::kF32, {b, sq, hq, dv});
    args.lse = TensorView::contiguous(lse.data(), DType::kF32, {b, hq, sq});
  }
  float& q_at(int64_t bi, int64_t i, int64_t h, int64_t e) {
    return q[((bi * sq + i) * hq + h) * d + e];
  }
  float& k_at(int64_t bi, int64_t j, int64_t h, int64_t e) {
    return k[((bi * sk + j) * hkv + h) * d + e];
  }
  float& v_at(int64_t bi, int64_t j, int64_t h, int64_t e) {
    return v[((bi * sk + j) * hkv + h) * dv + e];
  }
  float out_at(int64_t bi, int64_t i, int64_t h, int64_t e) const {
    return out[((bi * sq + i) * hq + h) * dv + e];
  }
  float lse_at(int64_t bi, int64_t h, int64_t i) const { return lse[(bi * hq + h) * sq + i]; }
};

}  // namespace tessera::verify::testing
