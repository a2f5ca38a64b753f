#include "verify/naive.h"

#include <cmath>
#include <limits>
#include <vector>

#include "tessera/allocator.h"

namespace tessera::verify {

namespace {

constexpr std::string_view kNaiveOwner = "verify.naive";

struct RowContext {
  const AttentionArgs* args;
  AttentionDims dims;
  DType precision;
  float scale;
};

// One output row (sequence b, head h, query i). scores: Sk floats of scratch.
void naive_row(const RowContext& rc, int64_t b, int64_t h, int64_t i, const SeqRange& r,
               float* scores) {
  const AttentionArgs& a = *rc.args;
  const auto rnd = [&](float x) { return round_to_dtype(x, rc.precision); };
  const int64_t kh = h / (rc.dims.hq / rc.dims.hkv);
  const int64_t tb = a.varlen ? 0 : b;
  const int64_t qi = r.q_begin + i;
  const float* q = static_cast<const float*>(a.q.data) + a.q.offset({tb, qi, h, 0});
  const float neg_inf = -std::numeric_limits<float>::infinity();
  float max_score = neg_inf;
  bool nan_seen = false;
  for (int64_t j = 0; j < r.k_len; ++j) {
    scores[j] = neg_inf;
    if (!a.mask.visible(i, j, r.q_len, r.k_len)) continue;
    const float* k = static_cast<const float*>(a.k.data) + a.k.offset({tb, r.k_begin + j, kh, 0});
    float dot = 0.0f;
    for (int64_t d = 0; d < rc.dims.d; ++d) dot += q[d] * k[d];
    float s = rnd(rnd(dot) * rc.scale);
    if (a.softcap > 0) s = rnd(a.softcap * rnd(std::tanh(rnd(s / a.softcap))));
    if (a.bias.present()) {
      const auto idx = [&](int dim, int64_t full) { return a.bias.shape[dim] == 1 ? 0 : full; };
      s = rnd(s + static_cast<const float*>(
                      a.bias.data)[a.bias.offset({idx(0, b), idx(1, h), idx(2, i), idx(3, j)})]);
    }
    if (std::isnan(s)) nan_seen = true;
    scores[j] = s;
    if (s > max_score) max_score = s;
  }
  float* out = static_cast<float*>(a.out.data) + a.out.offset({tb, qi, h, 0});
  float& lse = static_cast<float*>(a.lse.data)[a.lse.offset({tb, h, qi})];
  if (nan_seen) {
    for (int64_t d = 0; d < rc.dims.dv; ++d) out[d] = std::numeric_limits<float>::quiet_NaN();
    lse = std::numeric_limits<float>::quiet_NaN();
    return;
  }
  for (int64_t d = 0; d < rc.dims.dv; ++d) out[d] = 0.0f;
  if (max_score == neg_inf) {
    lse = neg_inf;
    return;
  }
  float sum = 0.0f;
  for (int64_t j = 0; j < r.k_len; ++j) {
    scores[j] = std::exp(scores[j] - max_score);  // exp(-inf) = 0 for masked keys
    sum += scores[j];
  }
  for (int64_t j = 0; j < r.k_len; ++j) {
    const float p = rnd(scores[j] / sum);
    if (p == 0.0f) continue;
    const float* v = static_cast<const float*>(a.v.data) + a.v.offset({tb, r.k_begin + j, kh, 0});
    for (int64_t d = 0; d < rc.dims.dv; ++d) out[d] += p * v[d];
  }
  for (int64_t d = 0; d < rc.dims.dv; ++d) out[d] = rnd(out[d]);
  lse = max_score + std::log(sum);
}

}  // namespace

Status naive_attention(const AttentionArgs& args, DType precision, Context& ctx) {
  TESSERA_RETURN_IF_ERROR(validate(args));
  if (!args.lse.present()) return invalid_argument("naive_attention needs lse present");
  const RowContext rc{&args, dims_of(args), precision, args.effective_scale()};
  const int threads = ctx.pool().num_threads();
  std::vector<Buffer> scratch(static_cast<size_t>(threads));
  for (Buffer& s : scratch) {
    TESSERA_RETURN_IF_ERROR(Buffer::allocate(
        ctx.allocator(), static_cast<size_t>(rc.dims.sk + 1) * sizeof(float), kNaiveOwner, &s));
  }
  ctx.pool().parallel_for(rc.dims.batch * rc.dims.hq, [&](int64_t unit, int thread) {
    const int64_t b = unit / rc.dims.hq, h = unit % rc.dims.hq;
    const SeqRange r = seq_range(args, b);
    float* scores = scratch[static_cast<size_t>(thread)].as<float>();
    for (int64_t i = 0; i < r.q_len; ++i) naive_row(rc, b, h, i, r, scores);
  });
  return Status::Ok();
}

}  // namespace tessera::verify
