// Attention on three arrays through the installed package: q, k and v as
// plain float arrays, the dispatcher picks a backend, and the result is
// checked against the formula written out here. Exit 0 when they agree.
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "tessera/runtime.h"
#include "tessera/tessera.h"

namespace {

constexpr int64_t kSeq = 5, kHeads = 2, kDim = 8;  // [B=1, S, H, D], BSHD
constexpr double kTolerance = 1e-5;

// out[i, h, :] = softmax_j(q[i, h] . k[j, h] / sqrt(D)) v[j, h, :]
std::vector<float> naive_attention(const std::vector<float>& q, const std::vector<float>& k,
                                   const std::vector<float>& v) {
  std::vector<float> out(q.size());
  const double scale = 1.0 / std::sqrt(static_cast<double>(kDim));
  auto at = [](int64_t s, int64_t h, int64_t d) { return (s * kHeads + h) * kDim + d; };
  for (int64_t h = 0; h < kHeads; ++h) {
    for (int64_t i = 0; i < kSeq; ++i) {
      std::vector<double> p(kSeq);
      double max = -1e300, sum = 0;
      for (int64_t j = 0; j < kSeq; ++j) {
        double s = 0;
        for (int64_t d = 0; d < kDim; ++d) s += double(q[at(i, h, d)]) * k[at(j, h, d)];
        p[j] = s * scale;
        max = std::max(max, p[j]);
      }
      for (double& x : p) sum += (x = std::exp(x - max));
      for (int64_t d = 0; d < kDim; ++d) {
        double o = 0;
        for (int64_t j = 0; j < kSeq; ++j) o += p[j] / sum * v[at(j, h, d)];
        out[at(i, h, d)] = static_cast<float>(o);
      }
    }
  }
  return out;
}

}  // namespace

int main() {
  std::printf("tessera %s\n", tessera::library_version());
  std::unique_ptr<tessera::Runtime> runtime;
  if (tessera::Status s = tessera::Runtime::create({}, &runtime); !s.ok()) {
    std::fprintf(stderr, "runtime: %s\n", s.to_string().c_str());
    return 1;
  }
  const size_t n = kSeq * kHeads * kDim;
  std::vector<float> q(n), k(n), v(n), out(n);
  for (size_t i = 0; i < n; ++i) {  // deterministic, varied values
    q[i] = std::sin(0.37f * i);
    k[i] = std::cos(0.21f * i);
    v[i] = 0.01f * static_cast<float>(i % 17) - 0.05f;
  }
  using tessera::DType;
  using tessera::TensorView;
  tessera::AttentionArgs args;
  args.q = TensorView::contiguous(q.data(), DType::kF32, {1, kSeq, kHeads, kDim});
  args.k = TensorView::contiguous(k.data(), DType::kF32, {1, kSeq, kHeads, kDim});
  args.v = TensorView::contiguous(v.data(), DType::kF32, {1, kSeq, kHeads, kDim});
  args.out = TensorView::contiguous(out.data(), DType::kF32, {1, kSeq, kHeads, kDim});
  std::string used;
  if (tessera::Status s = runtime->dispatcher().run(args, runtime->context(), &used); !s.ok()) {
    std::fprintf(stderr, "attention: %s\n", s.to_string().c_str());
    return 1;
  }
  const std::vector<float> expected = naive_attention(q, k, v);
  double worst = 0;
  for (size_t i = 0; i < n; ++i) worst = std::max(worst, std::abs(double(out[i]) - expected[i]));
  std::printf("attention [1, %lld, %lld, %lld] on %s: max |out - formula| = %.3g\n",
              static_cast<long long>(kSeq), static_cast<long long>(kHeads),
              static_cast<long long>(kDim), used.c_str(), worst);
  return worst <= kTolerance ? 0 : 1;
}
