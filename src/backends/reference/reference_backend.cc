// The reference computes each output row on its own in float64:
//   scores over the visible keys -> softcap -> + bias -> softmax -> P.V
// Semantics it defines (see include/tessera/attention.h):
//   - no visible key (or every score -inf): out row = 0, lse = -inf;
//   - any NaN score: out row = NaN, lse = NaN;
//   - invalid args: an error, out untouched (AttentionProblem::make).
#include "reference/reference_backend.h"

#include <cmath>
#include <limits>
#include <vector>

namespace tessera {

namespace {

class ReferenceBackend final : public Backend {
 public:
  std::string_view name() const override { return "reference"; }
  Device device() const override { return Device::cpu(); }
  int priority() const override { return 0; }  // correct, never fast
  const Capabilities& capabilities() const override {
    static const Capabilities caps = [] {
      Capabilities c;
      c.dtypes = {DType::kF32, DType::kF16, DType::kBF16};
      c.causal = c.window = c.bias = c.varlen = c.softcap = c.lse = c.gqa = c.dv_differs = true;
      return c;
    }();
    return caps;
  }
  size_t workspace_bytes(const AttentionProblem& p, const Context& /*ctx*/) const override {
    return static_cast<size_t>(p.dims().sk) * sizeof(double);
  }
  Status run(const AttentionProblem& p, Context& ctx) override;
};

// One (sequence, head) at a time: rows of q are independent.
struct RowJob {
  const AttentionArgs* args;
  AttentionDims dims;
  double scale;
};

void compute_row(const RowJob& job, int64_t b, int64_t h, int64_t i, const SeqRange& r,
                 std::vector<double>& scores) {
  const AttentionArgs& a = *job.args;
  const int64_t group = job.dims.hq / job.dims.hkv;
  const int64_t kh = h / group;
  // Packed (varlen) tensors have batch dimension 1; rows are offset instead.
  const int64_t tb = a.varlen ? 0 : b;
  const int64_t qi = r.q_begin + i;
  const double neg_inf = -std::numeric_limits<double>::infinity();
  double max_score = neg_inf;
  bool nan_seen = false;
  for (int64_t j = 0; j < r.k_len; ++j) {
    scores[j] = neg_inf;
    if (!a.mask.visible(i, j, r.q_len, r.k_len)) continue;
    const int64_t kj = r.k_begin + j;
    double dot = 0.0;
    for (int64_t d = 0; d < job.dims.d; ++d) {
      dot += static_cast<double>(load_as_f32(a.q.data, a.q.offset({tb, qi, h, d}), a.q.dtype)) *
             static_cast<double>(load_as_f32(a.k.data, a.k.offset({tb, kj, kh, d}), a.k.dtype));
    }
    double s = dot * job.scale;
    if (a.softcap > 0) s = a.softcap * std::tanh(s / a.softcap);
    if (a.bias.present()) {
      const auto idx = [&](int dim, int64_t full) { return a.bias.shape[dim] == 1 ? 0 : full; };
      s += static_cast<double>(static_cast<const float*>(
          a.bias.data)[a.bias.offset({idx(0, b), idx(1, h), idx(2, i), idx(3, j)})]);
    }
    if (std::isnan(s)) nan_seen = true;
    scores[j] = s;
    if (s > max_score) max_score = s;
  }
  double lse;
  std::vector<double> acc(job.dims.dv, 0.0);
  if (nan_seen) {
    lse = std::numeric_limits<double>::quiet_NaN();
    acc.assign(job.dims.dv, lse);
  } else if (max_score == neg_inf) {
    lse = neg_inf;  // fully masked row: zeros
  } else {
    double sum = 0.0;
    for (int64_t j = 0; j < r.k_len; ++j) {
      if (scores[j] == neg_inf) continue;
      const double p = std::exp(scores[j] - max_score);
      sum += p;
      const int64_t kj = r.k_begin + j;
      for (int64_t d = 0; d < job.dims.dv; ++d) {
        acc[d] +=
            p * static_cast<double>(load_as_f32(a.v.data, a.v.offset({tb, kj, kh, d}), a.v.dtype));
      }
    }
    for (double& x : acc) x /= sum;
    lse = max_score + std::log(sum);
  }
  for (int64_t d = 0; d < job.dims.dv; ++d) {
    store_from_f32(a.out.data, a.out.offset({tb, qi, h, d}), a.out.dtype,
                   static_cast<float>(acc[d]));
  }
  if (a.lse.present()) {
    static_cast<float*>(a.lse.data)[a.lse.offset({tb, h, qi})] = static_cast<float>(lse);
  }
}

Status ReferenceBackend::run(const AttentionProblem& p, Context& ctx) {
  const AttentionArgs& args = p.args();
  RowJob job{&args, p.dims(), static_cast<double>(p.scale())};
  const int64_t units = job.dims.batch * job.dims.hq;
  ctx.pool().parallel_for(units, [&](int64_t unit, int /*thread*/) {
    const int64_t b = unit / job.dims.hq;
    const int64_t h = unit % job.dims.hq;
    const SeqRange r = seq_range(args, b);
    std::vector<double> scores(static_cast<size_t>(r.k_len));
    for (int64_t i = 0; i < r.q_len; ++i) compute_row(job, b, h, i, r, scores);
  });
  return Status::Ok();
}

}  // namespace

std::unique_ptr<Backend> make_reference_backend() { return std::make_unique<ReferenceBackend>(); }

}  // namespace tessera
