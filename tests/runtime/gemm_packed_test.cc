// linear() against a float64 product of the f32 inputs, for f32 and bf16
// weights, every epilogue and several pool sizes. The products' error bound:
//   |z - ref| <= (2u + u^2 + gamma_k (1 + u)^2) * (sum_p |x_ip| |w_jp| + |b_j|)
// with u the weights' unit roundoff (bf16: 2^-8 for x and W; f32: 0),
// gamma_k = (k + 1) eps / (1 - (k + 1) eps), eps = 2^-24 (the bias is one more
// addition). GELU is 1.13-Lipschitz, and the library evaluates erf to about
// 1e-6 of GELU's size (kGeluAbsolute); the residual add is one more rounding.
// bf16 activations (LinearTypes): a bf16 x is x rounded by the test before
// the call (within the 2u the bound already allows for x); a bf16 y adds one
// rounding of the result, u |ref|.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <span>
#include <vector>

#include "runtime/gemm.h"

namespace tessera {
namespace {

constexpr double kBf16UnitRoundoff = 1.0 / 256;      // 2^-8
constexpr double kF32UnitRoundoff = 1.0 / 16777216;  // 2^-24
constexpr double kGeluLipschitz = 1.13;              // max |GELU'(z)|
constexpr double kGeluAbsolute = 2e-6;               // erf evaluation, times max(1, |z|)
constexpr float kGuard = -12345.0f;                  // y's padding columns stay this

double product_bound_factor(WeightType type, int64_t k) {
  const double u = type == WeightType::kBf16 ? kBf16UnitRoundoff : 0.0;
  const double n = static_cast<double>(k + 1);
  const double gamma = n * kF32UnitRoundoff / (1 - n * kF32UnitRoundoff);
  return 2 * u + u * u + gamma * (1 + u) * (1 + u);
}

double gelu64(double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); }

struct Case {
  int64_t m, n, k;
};

struct Variant {
  WeightType type;
  bool bias, gelu, accumulate;
  int threads;
  LinearTypes io{};
};

std::string describe(const Case& c, const Variant& v) {
  return std::string(v.type == WeightType::kBf16 ? "bf16" : "f32") + " x " +
         std::string(dtype_name(v.io.x)) + " -> " + std::string(dtype_name(v.io.y)) +
         " M=" + std::to_string(c.m) +
         " N=" + std::to_string(c.n) + " K=" + std::to_string(c.k) + (v.bias ? " +bias" : "") +
         (v.gelu ? " +gelu" : "") + (v.accumulate ? " +accumulate" : "") +
         " threads=" + std::to_string(v.threads);
}

// Weights and inputs of mixed sign and magnitude; y has a guard row after
// the last so a piece that overruns its rows is seen. Returns false if the
// CPU has no kernel for the weight type (the caller skips).
bool check_case(const Case& c, const Variant& v, TrackingAllocator& alloc) {
  SCOPED_TRACE(describe(c, v));
  const int64_t ldx = c.k, ldy = c.n;
  std::mt19937 rng(static_cast<uint32_t>(c.m * 7919 + c.n * 31 + c.k));
  std::uniform_real_distribution<float> mant(-1.0f, 1.0f);
  std::uniform_int_distribution<int> expo(-4, 4);
  auto value = [&] { return std::ldexp(mant(rng), expo(rng)); };
  std::vector<float> w(c.n * c.k), x(c.m * ldx), y((c.m + 1) * ldy, kGuard), b(c.n);
  for (float& e : w) {
    e = value();
  }
  for (float& e : x) {
    e = value();
  }
  for (float& e : b) {
    e = value();
  }
  if (v.accumulate) {
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        y[i * ldy + j] = value();
      }
    }
  }
  const std::vector<float> y_old = y;
  // The arguments as the call sees them: bf16 copies where the types say so
  // (x then holds the rounded values the product really gets).
  std::vector<uint16_t> x_bf16, y_bf16;
  const void* x_arg = x.data();
  void* y_arg = y.data();
  if (v.io.x == DType::kBF16) {
    for (float& e : x) {
      x_bf16.push_back(f32_to_bf16(e));
      e = bf16_to_f32(x_bf16.back());
    }
    x_arg = x_bf16.data();
  }
  if (v.io.y == DType::kBF16) {
    for (float e : y) {
      y_bf16.push_back(f32_to_bf16(e));
    }
    y_arg = y_bf16.data();
  }

  PackedWeights pw;
  const Status made = PackedWeights::create(w.data(), c.n, c.k, v.type, alloc, "test.weights", &pw);
  if (made.code() == StatusCode::kUnsupported && v.type == WeightType::kBf16) {
    return false;
  }
  EXPECT_TRUE(made.ok()) << made.to_string();
  if (!made.ok()) {
    return true;
  }
  EXPECT_GE(pw.bytes(), static_cast<size_t>(c.n * c.k * (v.type == WeightType::kBf16 ? 2 : 4)));
  LinearEpilogue e{v.bias ? b.data() : nullptr, v.gelu, v.accumulate};
  size_t bytes = 0;
  EXPECT_TRUE(linear_workspace_bytes(v.threads, c.m, pw, e, &bytes, v.io).ok());
  Buffer work;
  EXPECT_TRUE(Buffer::allocate(alloc, bytes, "test.workspace", &work).ok());
  ThreadPool pool(v.threads);
  const Status st = linear(pool, c.m, v.io, x_arg, pw, e, y_arg, work.data(), bytes);
  EXPECT_TRUE(st.ok()) << st.to_string();
  if (v.io.y == DType::kBF16) {
    for (size_t i = 0; i < y.size(); ++i) {
      y[i] = bf16_to_f32(y_bf16[i]);
    }
  }
  const float guard = v.io.y == DType::kBF16 ? bf16_to_f32(f32_to_bf16(kGuard)) : kGuard;

  const double factor = product_bound_factor(v.type, c.k);
  double worst_ratio = 0;  // |error| / bound, worst element
  int64_t worst_i = -1, worst_j = -1;
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double z = v.bias ? b[j] : 0.0, mag = v.bias ? std::fabs(b[j]) : 0.0;
      for (int64_t p = 0; p < c.k; ++p) {
        z += double(x[i * ldx + p]) * w[j * c.k + p];
        mag += std::fabs(double(x[i * ldx + p]) * w[j * c.k + p]);
      }
      double ref = z, bound = factor * mag;
      if (v.gelu) {
        ref = gelu64(z);
        bound = kGeluLipschitz * bound + kGeluAbsolute * std::max(1.0, std::fabs(z));
      }
      if (v.accumulate) {
        ref += y_old[i * ldy + j];
        bound += kF32UnitRoundoff * std::fabs(ref);
      }
      if (v.io.y == DType::kBF16) {
        bound += kBf16UnitRoundoff * std::fabs(ref);
      }
      const double ratio = std::fabs(y[i * ldy + j] - ref) / bound;
      if (!(ratio <= worst_ratio)) {
        worst_ratio = ratio, worst_i = i, worst_j = j;
      }
    }
  }
  for (int64_t j = 0; j < c.n; ++j) {
    if (y[c.m * ldy + j] != guard) {
      ADD_FAILURE() << "the guard row after row " << c.m - 1 << " was written (column " << j << ")";
      break;
    }
  }
  EXPECT_LE(worst_ratio, 1.0) << "worst element (" << worst_i << ", " << worst_j << "): error is "
                              << worst_ratio << " x the bound";
  std::printf("[ linear ] %s: worst error %.3f of the bound\n", describe(c, v).c_str(),
              worst_ratio);
  return true;
}

// Odd sizes on purpose, the encoder's shapes (384 / 1152 / 1536), M below,
// at and across the pieces the rows are cut into (64-row multiples, one per
// thread: 2100 rows on 3 threads is 704 + 704 + 692).
constexpr Case kCases[] = {{1, 7, 5},        {3, 33, 64},     {17, 384, 385}, {64, 1152, 384},
                           {129, 384, 1536}, {70, 1536, 384}, {2100, 20, 48}};

// Every variant on every case, then no tracked byte left. Skips (visibly)
// where the CPU has no bf16 matrix kernel at all (AVX2: oneDNN 2.6 has no
// bf16 matmul there, and `--weights bf16` is refused the same way).
void check_variants(std::span<const Variant> variants) {
  TrackingAllocator alloc;
  for (const Variant& v : variants) {
    for (const Case& c : kCases) {
      if (!check_case(c, v, alloc)) {
        GTEST_SKIP() << "no bf16 matrix kernel on this CPU";
      }
    }
  }
  EXPECT_EQ(alloc.live_bytes(), 0u);
  EXPECT_TRUE(alloc.leaks().empty());
}

void check_all(WeightType type) {
  const Variant variants[] = {{type, false, false, false, 1}, {type, true, false, false, 2},
                              {type, true, true, false, 2},   {type, true, false, true, 3},
                              {type, false, false, true, 1},  {type, true, true, false, 3}};
  check_variants(variants);
}

TEST(Linear, F32WithinTheRoundingBound) { check_all(WeightType::kF32); }
TEST(Linear, Bf16WithinTheRoundingBound) { check_all(WeightType::kBf16); }

// bf16 activations in, out and both, as the encoder chains them with bf16
// weights (x bf16 into an accumulate; y bf16 out of a GELU).
TEST(Linear, Bf16ActivationsWithinTheRoundingBound) {
  const auto bf16 = WeightType::kBf16;
  const LinearTypes x_in{DType::kBF16, DType::kF32}, y_out{DType::kF32, DType::kBF16},
      both{DType::kBF16, DType::kBF16};
  const Variant variants[] = {{bf16, true, false, true, 2, x_in},  {bf16, false, false, false, 3, x_in},
                              {bf16, true, false, false, 2, y_out}, {bf16, true, true, false, 3, y_out},
                              {bf16, true, true, false, 1, both}};
  check_variants(variants);
}

// GELU's tails through the epilogue: tiny negative outputs keep their
// relative accuracy loosely (GELU(-5) = -1.4e-6 must not come out 0 or
// positive), large inputs pass through, NaN stays NaN.
TEST(Linear, GeluEpilogueTailsAndSpecialValues) {
  TrackingAllocator alloc;
  const std::vector<float> z = {-12.0f, -5.0f, -3.0f, -1e-20f, 0.0f, 1e-20f, 5.0f, 12.0f, 1e30f};
  // x = z as a column, W = [1]: y = gelu(z).
  const std::vector<float> one = {1.0f};
  PackedWeights pw;
  ASSERT_TRUE(
      PackedWeights::create(one.data(), 1, 1, WeightType::kF32, alloc, "test.weights", &pw).ok());
  const LinearEpilogue e{nullptr, true, false};
  const int64_t m = static_cast<int64_t>(z.size());
  size_t bytes = 0;
  ASSERT_TRUE(linear_workspace_bytes(1, m, pw, e, &bytes).ok());
  Buffer work;
  ASSERT_TRUE(Buffer::allocate(alloc, bytes, "test.workspace", &work).ok());
  ThreadPool pool(1);
  std::vector<float> y(z.size());
  ASSERT_TRUE(linear(pool, m, z.data(), pw, e, y.data(), work.data(), bytes).ok());
  for (size_t i = 0; i < z.size(); ++i) {
    const double want = gelu64(z[i]);
    EXPECT_NEAR(y[i], want, kGeluAbsolute * std::max(1.0, std::fabs(double(z[i])))) << "z=" << z[i];
    if (want < 0) {
      EXPECT_LE(y[i], 0.0f) << "z=" << z[i];
    }
  }
  std::printf("[ linear ] gelu(-5) = %.9g (exact %.9g), gelu(-3) = %.9g (exact %.9g)\n", y[1],
              gelu64(-5.0), y[2], gelu64(-3.0));
}

TEST(Linear, UnpackGivesTheWeightsBack) {
  TrackingAllocator alloc;
  std::vector<float> w(size_t{37} * 19);
  for (size_t i = 0; i < w.size(); ++i) {
    w[i] = 0.25f * static_cast<float>(i) - 3.0f;
  }
  for (WeightType type : {WeightType::kF32, WeightType::kBf16}) {
    PackedWeights pw;
    const Status made = PackedWeights::create(w.data(), 37, 19, type, alloc, "test.weights", &pw);
    if (made.code() == StatusCode::kUnsupported) {
      continue;  // no bf16 kernel
    }
    ASSERT_TRUE(made.ok()) << made.to_string();
    std::vector<float> back(w.size());
    ASSERT_TRUE(pw.unpack(back.data()).ok());
    // Multiples of 0.25 up to 150 need at most 10 significant bits: bf16 has 8,
    // so compare bf16 with its rounding, f32 exactly.
    for (size_t i = 0; i < w.size(); ++i) {
      const double tol = type == WeightType::kBf16 ? std::fabs(w[i]) * kBf16UnitRoundoff : 0.0;
      ASSERT_LE(std::fabs(back[i] - w[i]), tol) << i;
    }
  }
  EXPECT_EQ(alloc.live_bytes(), 0u);
}

TEST(Linear, RejectsBadArgumentsWithoutWriting) {
  TrackingAllocator alloc;
  std::vector<float> w(size_t{32}, 1.0f), x(size_t{16}, 1.0f), y(size_t{8}, kGuard);
  PackedWeights pw;
  ASSERT_TRUE(
      PackedWeights::create(w.data(), 4, 8, WeightType::kF32, alloc, "test.weights", &pw).ok());
  ThreadPool pool(2);
  const LinearEpilogue e;
  size_t bytes = 0;
  ASSERT_TRUE(linear_workspace_bytes(2, 2, pw, e, &bytes).ok());
  std::vector<char> work(bytes + 1);
  Status st = linear(pool, -1, x.data(), pw, e, y.data(), work.data(), bytes);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("M = -1"), std::string::npos) << st.message();
  st = linear(pool, 2, x.data(), PackedWeights(), e, y.data(), work.data(), bytes);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  // 64 rows make two pieces on two threads: the workspace must hold both.
  std::vector<float> x64(size_t{64} * 8, 1.0f), y64(size_t{64} * 4, kGuard);
  ASSERT_TRUE(linear_workspace_bytes(2, 64, pw, e, &bytes).ok());
  if (bytes > 0) {
    std::vector<char> work64(bytes);
    st = linear(pool, 64, x64.data(), pw, e, y64.data(), work64.data(), bytes - 1);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("workspace"), std::string::npos) << st.message();
    for (float v : y64) {
      EXPECT_EQ(v, kGuard);
    }
  }
  for (float v : y) {
    EXPECT_EQ(v, kGuard);
  }
  // bf16 activations need bf16 or int8 weights; f16 activations are not offered.
  st = linear(pool, 2, LinearTypes{DType::kBF16, DType::kF32}, x.data(), pw, e, y.data(),
              work.data(), bytes);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("x is bf16"), std::string::npos) << st.message();
  st = linear(pool, 2, LinearTypes{DType::kF32, DType::kF16}, x.data(), pw, e, y.data(),
              work.data(), bytes);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("y is f16"), std::string::npos) << st.message();
  for (float v : y) {
    EXPECT_EQ(v, kGuard);
  }
  EXPECT_EQ(
      PackedWeights::create(w.data(), 0, 8, WeightType::kF32, alloc, "test.weights", &pw).code(),
      StatusCode::kInvalidArgument);
}

// The products run on the library's fast kernels, not its reference loops
// (which also give right answers, 100x slower: a layout or stride mistake
// would pass every accuracy test).
TEST(Linear, UsesTheLibrarysFastKernels) {
  const std::string f32 = linear_kernel(WeightType::kF32);
  EXPECT_EQ(f32.rfind("ref", 0), std::string::npos) << f32;
  // Where bf16 has only reference loops (or nothing), bf16 weights are refused.
  const std::string bf16 = linear_kernel(WeightType::kBf16);
  if (bf16 != "none" && bf16.rfind("ref", 0) != 0) {
    // bf16 activations in and out take the same class of kernel.
    for (const LinearTypes t : {LinearTypes{DType::kBF16, DType::kF32},
                                LinearTypes{DType::kF32, DType::kBF16},
                                LinearTypes{DType::kBF16, DType::kBF16}}) {
      const std::string k = linear_kernel(WeightType::kBf16, t);
      EXPECT_EQ(k.rfind("ref", 0), std::string::npos) << k;
    }
  }
  if (bf16 == "none" || bf16.rfind("ref", 0) == 0) {
    TrackingAllocator alloc;
    const std::vector<float> w(16, 1.0f);
    PackedWeights pw;
    EXPECT_EQ(PackedWeights::create(w.data(), 4, 4, WeightType::kBf16, alloc, "test", &pw).code(),
              StatusCode::kUnsupported)
        << bf16;
  }
}

}  // namespace
}  // namespace tessera
