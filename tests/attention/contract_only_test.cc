// The contract library stands alone: this binary links tessera_contract and
// every backend of the build (tessera_builtin_backends), and not the
// dispatcher library tessera_attention (tests/attention/CMakeLists.txt; the
// configure refuses a backend that links it, cmake/TesseraBackend.cmake). A
// backend that calls into the dispatcher's side (a Registry, a Dispatcher,
// tuning, shadow, staging) leaves an undefined symbol here and the build
// fails. Each backend that can take host tensors then runs one problem
// through the contract alone (run_args), beside the reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "backends/builtin_backends.h"
#include "tessera/backend.h"
#include "tessera/context.h"

namespace tessera {
namespace {

// [1, 24, 2, 32] f32 q, k, v and out, causal: what every CPU backend takes.
constexpr int64_t kB = 1, kS = 24, kH = 2, kD = 32;
constexpr size_t kElems = kB * kS * kH * kD;

struct Problem {
  std::vector<float> q, k, v, out;
  AttentionArgs args;
  Problem() : q(kElems), k(kElems), v(kElems), out(kElems, NAN) {
    for (size_t i = 0; i < kElems; ++i) {
      q[i] = std::sin(0.37f * static_cast<float>(i));
      k[i] = std::cos(0.11f * static_cast<float>(i));
      v[i] = std::sin(0.05f * static_cast<float>(i) + 1.0f);
    }
    args.q = TensorView::contiguous(q.data(), DType::kF32, {kB, kS, kH, kD});
    args.k = TensorView::contiguous(k.data(), DType::kF32, {kB, kS, kH, kD});
    args.v = TensorView::contiguous(v.data(), DType::kF32, {kB, kS, kH, kD});
    args.out = TensorView::contiguous(out.data(), DType::kF32, {kB, kS, kH, kD});
    args.mask = Mask::causal();
  }
};

TEST(ContractOnly, EveryBackendRunsWithoutTheDispatcherLibrary) {
  Context ctx(ContextOptions{.num_threads = 2});
  const std::vector<std::unique_ptr<Backend>> backends = make_builtin_backends();
  ASSERT_FALSE(backends.empty());
  ASSERT_EQ(backends.front()->name(), "reference") << "the reference is made first";
  Problem want;
  ASSERT_TRUE(run_args(*backends.front(), want.args, ctx).ok());

  int ran = 0;
  for (const auto& backend : backends) {
    const std::string name(backend->name());
    if (const Availability av = backend->availability(); !av.available) {
      std::printf("%-24s not here: %s\n", name.c_str(), av.reason.c_str());
      continue;
    }
    Problem got;
    if (const std::vector<std::string> why = check_args(*backend, got.args, ctx); !why.empty()) {
      std::printf("%-24s cannot run it: %s\n", name.c_str(), why.front().c_str());
      continue;
    }
    const Status status = run_args(*backend, got.args, ctx);
    ASSERT_TRUE(status.ok()) << name << ": " << status.to_string();
    // f32 in, f32 products (the bf16 paths refuse f32): this shows the
    // backend computed the problem; tests/conformance judges how well.
    float worst = 0;
    for (size_t i = 0; i < kElems; ++i) worst = std::max(worst, std::abs(got.out[i] - want.out[i]));
    EXPECT_LE(worst, 1e-4f) << name;
    std::printf("%-24s ran: max |out - reference| %.3g\n", name.c_str(), worst);
    ++ran;
  }
  EXPECT_GE(ran, 1);
  EXPECT_TRUE(ctx.allocator().leaks().empty());
}

}  // namespace
}  // namespace tessera
